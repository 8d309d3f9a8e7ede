package streams

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// A deployment of before without lanes (its main durables on their one
// subject, a call delivered and not yet acknowledged) upgrades in place:
// no old lane hop waits, so the main durable's filter is widened and the
// durable is not created again, which would redeliver every call in flight.
// Applied again, nothing changes.
func TestEnsure_widens_a_main_durable_in_place_without_old_lane_hops(t *testing.T) {
	srv := testenv.RunJetStream(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := DefaultSettings()
	gates, err := js.CreateStream(ctx, s.StreamConfigs()[1])
	if err != nil {
		t.Fatal(err)
	}
	old := s.Config(Consumer{Name: Parse, Subject: Gate(Parse)}) // the main durable of before
	c, err := gates.CreateConsumer(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, Gate(Parse), []byte("in flight")); err != nil {
		t.Fatal(err)
	}
	m, err := c.Next()
	if err != nil {
		t.Fatal(err)
	}
	created := c.CachedInfo().Created
	for range 2 {
		if err := Ensure(ctx, js, s); err != nil {
			t.Fatal(err)
		}
		ci, err := gates.Consumer(ctx, Parse)
		if err != nil {
			t.Fatal(err)
		}
		info := ci.CachedInfo()
		if !info.Created.Equal(created) || info.NumAckPending != 1 || info.Delivered.Consumer != 1 {
			t.Fatalf("main durable created %v (was %v), ack pending %d, delivered %d: created again", info.Created, created, info.NumAckPending, info.Delivered.Consumer)
		}
		if len(info.Config.FilterSubjects) != 2 || info.Config.FilterSubjects[1] != LegacyGateLane(Parse, "*") {
			t.Fatalf("main durable filters %q %v, want its subject and the old lanes'", info.Config.FilterSubject, info.Config.FilterSubjects)
		}
	}
	if err := m.Ack(); err != nil {
		t.Fatal(err)
	}
}
