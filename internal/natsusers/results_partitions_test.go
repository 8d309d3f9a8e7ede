package natsusers

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// partitionRID is a response id of tenant in partition p of 3.
func partitionRID(tenant string, p int) string {
	for i := 0; ; i++ {
		if id := "r" + strconv.Itoa(i); streams.Partition(tenant, id, 3) == p {
			return id
		}
	}
}

// With P = 3 a stage publishes a call's result in its partition's results
// stream (toolgate.results.<tenant>.<rid>.p1 in TOOLGATE_RESULTS_1) and
// nothing else under toolgate.results.; the tenant's producer receives its
// own partition 1 result through its toolgate.results.<tenant>.> and may
// not subscribe to another tenant's; the console reads TOOLGATE_RESULTS_1.
func TestPermissions_results_of_a_partition_reach_their_tenant_and_the_console(t *testing.T) {
	c := trustConfig()
	c.Partitions = 3
	pw := map[string]string{}
	for _, u := range c.Names() {
		pw[u] = "pw-" + u
	}
	users, err := ConfigUsers(c, pw)
	if err != nil {
		t.Fatal(err)
	}
	s := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Fair.Partitions = 3
	anc, ajs := connectAs(t, s, authz.Admin, nil)
	if err := streams.Ensure(ctx, ajs, set); err != nil {
		t.Fatal(err)
	}
	anc.Close()

	v := &violations{}
	pnc, _ := connectAs(t, s, authz.ProducerUser("acme"), v)
	got := make(chan *nats.Msg, 4)
	if _, err := pnc.ChanSubscribe(wire.TenantResults("acme"), got); err != nil {
		t.Fatal(err)
	}
	deniedSubscribe(t, pnc, v, wire.ResultsForms("globex", partitionRID("globex", 1))[1])
	if err := pnc.Flush(); err != nil {
		t.Fatal(err)
	}

	sv := &violations{}
	_, sjs := connectAs(t, s, streams.Validate, sv)
	ours, theirs := streams.ResultsIn("acme", partitionRID("acme", 1), 3), streams.ResultsIn("globex", partitionRID("globex", 1), 3)
	for _, subj := range []string{theirs, ours} {
		ack, err := sjs.Publish(ctx, subj, []byte(`{"call_id":"x"}`))
		if err != nil || ack.Stream != streams.ResultsStream(1) {
			t.Fatalf("validate publishing a partition 1 result on %s: %v, %v", subj, ack, err)
		}
	}
	// Globex's was published first, on the same connection: had it reached
	// producer-acme, it would have come before acme's own.
	select {
	case m := <-got:
		if m.Subject != ours {
			t.Fatalf("producer-acme received %s, want %s", m.Subject, ours)
		}
	case <-ctx.Done():
		t.Fatalf("producer-acme did not receive its partition 1 result on %s", ours)
	}
	// Nothing else under toolgate.results.: a sixth token, a partition
	// beyond P.
	for _, junk := range []string{ours + ".x", wire.ResultsPartition("acme", "r1", 3)} {
		testenv.Refused(t, "validate publishing on "+junk, func() error { return sv.about(junk) }, func(ctx context.Context) error {
			_, err := sjs.PublishMsg(ctx, &nats.Msg{Subject: junk, Data: []byte(`{}`)}, jetstream.WithRetryAttempts(0))
			return err
		})
	}

	_, cjs := connectAs(t, s, authz.Console, nil)
	refs, err := streams.ResultsStreams(ctx, cjs)
	if err != nil || len(refs) != 3 {
		t.Fatalf("the console listing the results streams: %v, %v", refs, err)
	}
	st, err := cjs.Stream(ctx, streams.ResultsStream(1))
	if err != nil {
		t.Fatalf("the console reading %s: %v", streams.ResultsStream(1), err)
	}
	oc, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{streams.ResultsOfIn(1, partitionRID("acme", 1))}})
	if err != nil {
		t.Fatalf("the console reading %s: %v", streams.ResultsStream(1), err)
	}
	m, err := oc.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil || m.Subject() != ours {
		t.Fatalf("the console reading %s: %v, %v", streams.ResultsStream(1), m, err)
	}
}
