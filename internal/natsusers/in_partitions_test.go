package natsusers

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/natsmap/embedded"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// TestTrust_input_partitions_are_each_tenants_own: with P = 3 (the server
// mapping a stream's events and a tenant's batch responses to TOOLGATE_IN's
// partitions, and checking a publish on the mapped subject), a tenant's
// producer stores its stream events and batch responses in the partition
// the mapping picks, and publishes nothing into another tenant's, mapped
// or with a partition of its choosing; the shared producer its shared
// streams; accumulate consumes its durable and reads a stream back in
// each partition.
func TestTrust_input_partitions_are_each_tenants_own(t *testing.T) {
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
	if err := embedded.Apply(s, 3); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	anc0, ajs0 := connectAs(t, s, authz.Admin, nil)
	set := streams.DefaultSettings()
	set.Fair.Partitions = 3
	if err := streams.Ensure(ctx, ajs0, set); err != nil {
		t.Fatal(err)
	}
	anc0.Close()
	v := &violations{}
	_, pjs := connectAs(t, s, authz.ProducerUser("acme"), v)
	stored := func(js jetstream.JetStream, subject string, k int) {
		t.Helper()
		ack, err := js.Publish(ctx, subject, []byte("x"))
		if err != nil || ack.Stream != streams.InputStream(k) {
			t.Fatalf("publishing %s: %v %v, want stored in %s", subject, ack, err, streams.InputStream(k))
		}
	}
	for _, rid := range []string{"a", "b", "c", "d", "e", "f"} {
		stored(pjs, wire.InTenantStream("acme", rid), streams.ResponsePartition("acme", rid, 3))
	}
	stored(pjs, wire.InTenantBatch("acme"), streams.BatchPartition("acme", 3))
	_, cjs := connectAs(t, s, authz.Producer, nil) // the tenant-less producer: the shared subjects
	for _, rid := range []string{"a", "b", "c", "d", "e", "f"} {
		stored(cjs, streams.InStream(rid), streams.ResponsePartition("", rid, 3))
	}
	for _, subj := range []struct{ sent, checked string }{
		{wire.InTenantStream("globex", "a"), wire.InTenantStream("globex", "a") + "." + strconv.Itoa(streams.ResponsePartition("globex", "a", 3))},
		{wire.InTenantStream("globex", "a") + ".1", wire.InTenantStream("globex", "a") + ".1"},
		{wire.InTenantBatch("globex"), wire.InTenantBatch("globex") + "." + strconv.Itoa(streams.BatchPartition("globex", 3))},
		{wire.InTenantBatch("globex") + ".2", wire.InTenantBatch("globex") + ".2"},
	} {
		testenv.Refused(t, "producer-acme publishing "+subj.sent, func() error { return v.about(subj.checked) }, func(ctx context.Context) error {
			_, err := pjs.Publish(ctx, subj.sent, []byte("evil"))
			return err
		})
	}
	_, ajs := connectAs(t, s, streams.Accumulate, nil)
	for k := range 3 {
		if _, err := ajs.Consumer(ctx, streams.InputStream(k), streams.Accumulate); err != nil {
			t.Fatalf("accumulate's durable in %s: %v", streams.InputStream(k), err)
		}
		cons, err := ajs.CreateConsumer(ctx, streams.InputStream(k), jetstream.ConsumerConfig{FilterSubject: streams.InTenantStreams(), AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: time.Minute})
		if err != nil {
			t.Fatalf("accumulate reading a stream back in %s: %v", streams.InputStream(k), err)
		}
		if _, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil {
			t.Fatalf("accumulate fetching a stream's event in %s: %v", streams.InputStream(k), err)
		}
		_ = ajs.DeleteConsumer(ctx, streams.InputStream(k), cons.CachedInfo().Name)
	}
}
