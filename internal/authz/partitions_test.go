package authz_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// Each partitioned stage's user finds its partition streams by name, takes
// and acknowledges hops of its own durables in them, and hands calls to
// the partitions of the stage it routes to; the server refuses it another
// stage's partition streams (a fetch, a lookup, a new durable) and a hop
// into a stage it does not route to. Execute creates its groups' durables
// in its own partition streams only.
func TestPartitions_each_stage_consumes_only_its_own_partitions(t *testing.T) {
	c := authz.DefaultConfig()
	c.Partitions = 3
	s := runUsers(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := connect(t, s, authz.Admin)
	set := streams.DefaultSettings()
	set.Fair = streams.Fair{Lanes: 2, Partitions: 3}
	if err := streams.Ensure(ctx, admin, set); err != nil {
		t.Fatal(err)
	}
	parse1 := streams.PartitionStream(streams.Parse, 2)
	validate1 := streams.PartitionStream(streams.Validate, 2)
	for _, subj := range []string{streams.PartitionGateLane(streams.Parse, "1i", 2), streams.PartitionGateLane(streams.Validate, "1i", 2)} {
		if _, err := admin.Publish(ctx, subj, []byte("hop")); err != nil {
			t.Fatal(err)
		}
	}

	js, denied := connectWatched(t, s, streams.Parse)
	ps, err := streams.PartitionStreamsOf(ctx, js, streams.Parse)
	if err != nil || len(ps) != 2 {
		t.Fatalf("parse listing its partition streams: %v %v, want 1 and 2", ps, err)
	}
	own, err := js.Consumer(ctx, parse1, "parse_1i")
	if err != nil {
		t.Fatalf("parse looking up its own durable in %s: %v", parse1, err)
	}
	msgs, err := own.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for m := range msgs.Messages() {
		got++
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatalf("parse acknowledging its own partition's hop: %v", err)
		}
	}
	if got != 1 {
		t.Fatalf("parse fetched %d hops from %s (%v), want 1", got, parse1, msgs.Error())
	}
	if _, err := js.Publish(ctx, streams.PartitionGateLane(streams.Validate, "0i", 1), []byte("next")); err != nil {
		t.Errorf("parse handing a call to validate's partition 1: %v", err)
	}

	lookup := "$JS.API.CONSUMER.INFO." + validate1 + ".validate_1i"
	testenv.Refused(t, "parse looking up validate's durable in "+validate1, func() error { return denied.Saw(lookup) },
		func(c context.Context) error { _, err := js.Consumer(c, validate1, "validate_1i"); return err })
	// Fetching from validate's durable by the API subject: refused, and
	// the hop stays where it is.
	next := "$JS.API.CONSUMER.MSG.NEXT." + validate1 + ".validate_1i"
	testenv.Refused(t, "parse fetching from validate's "+validate1, func() error { return denied.Saw(next) },
		func(c context.Context) error {
			_, err := js.Conn().RequestWithContext(c, next, []byte(`{"batch":1,"no_wait":true}`))
			return err
		})
	create := "$JS.API.CONSUMER.CREATE." + validate1 + ".sneak"
	testenv.Refused(t, "parse creating a durable in "+validate1, func() error { return denied.SawPrefix(create) },
		func(c context.Context) error {
			_, err := js.CreateOrUpdateConsumer(c, validate1, jetstream.ConsumerConfig{Durable: "sneak", FilterSubject: streams.PartitionGateLane(streams.Validate, "9i", 2), AckPolicy: jetstream.AckExplicitPolicy})
			return err
		})
	policy1 := streams.PartitionGateLane(streams.Policy, "0i", 1)
	testenv.Refused(t, "parse publishing a hop into policy's partition 1 (it routes to validate and repair)", func() error { return denied.Saw(policy1) },
		func(c context.Context) error {
			_, err := js.Publish(c, policy1, []byte("skip"), jetstream.WithRetryAttempts(0))
			return err
		})
	vc, err := admin.Consumer(ctx, validate1, "validate_1i")
	if err != nil {
		t.Fatal(err)
	}
	info, err := vc.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumPending != 1 || info.Delivered.Consumer != 0 {
		t.Errorf("validate's durable in %s: pending %d, delivered %d, want its one hop untouched", validate1, info.NumPending, info.Delivered.Consumer)
	}

	// Execute: its groups' durables in its partition streams, no other.
	ex, exDenied := connectWatched(t, s, streams.Execute)
	g := set.ExecuteGroupPartitionConsumers("example", 4, 1)[0]
	if _, err := ex.CreateOrUpdateConsumer(ctx, g.Stream, set.Config(g)); err != nil {
		t.Errorf("execute creating its group's durable in %s: %v", g.Stream, err)
	}
	sneak := "$JS.API.CONSUMER.CREATE." + parse1 + ".sneak"
	testenv.Refused(t, "execute creating a durable in "+parse1, func() error { return exDenied.SawPrefix(sneak) },
		func(c context.Context) error {
			_, err := ex.CreateOrUpdateConsumer(c, parse1, jetstream.ConsumerConfig{Durable: "sneak", FilterSubject: streams.PartitionGate(streams.Parse, 2), AckPolicy: jetstream.AckExplicitPolicy})
			return err
		})
}
