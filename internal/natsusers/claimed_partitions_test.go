package natsusers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/natsmap/embedded"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// TestTrust_claimed_partitions_are_each_tenants_own: with P = 3 (the
// server mapping a claimed subject to its partition), a tenant's producer
// reads back what holds its own id in whichever partition it is (its
// conflict told at publish), and never another tenant's there; accumulate
// reads any tenant's in any partition and consumes its claimed durable in
// each partition stream.
func TestTrust_claimed_partitions_are_each_tenants_own(t *testing.T) {
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
	rid := ""
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		if streams.ResponsePartition("acme", id, 3) == 2 && streams.ResponsePartition("globex", id, 3) == 2 {
			rid = id
			break
		}
	}
	if rid == "" {
		t.Fatal("no id in partition 2 for both tenants")
	}
	v := &violations{}
	pnc, pjs := connectAs(t, s, authz.ProducerUser("acme"), v)
	p := producer.New(pjs).ForTenant("acme")
	m := producer.Meta{Provider: "openai-chat", ResponseID: rid}
	if err := p.PublishResponse(ctx, m, []byte(`{"a":1}`)); err != nil {
		t.Fatalf("producer-acme publishing on its claimed subject: %v", err)
	}
	if err := p.PublishResponse(ctx, m, []byte(`{"a":2}`)); !errors.Is(err, producer.ErrConflict) {
		t.Fatalf("producer-acme, other content under its used id in partition 2: %v, want ErrConflict", err)
	}
	_, gjs := connectAs(t, s, authz.ProducerUser("globex"), nil)
	if err := producer.New(gjs).ForTenant("globex").PublishResponse(ctx, m, []byte(`{"g":1}`)); err != nil {
		t.Fatal(err)
	}
	get := wire.ClaimedLastIn(wire.InTenantClaimed("globex", rid), 2)
	testenv.Refused(t, "producer-acme reading globex's claimed subject in its partition", func() error { return v.about(get) }, func(ctx context.Context) error {
		_, err := pnc.RequestWithContext(ctx, get, nil)
		return err
	})
	anc, ajs := connectAs(t, s, streams.Accumulate, nil)
	r, err := anc.RequestWithContext(ctx, get, nil)
	if err != nil || r.Header.Get("Status") != "" || string(r.Data) != `{"g":1}` {
		t.Fatalf("accumulate reading a claimed response in partition 2: %v %v", err, r)
	}
	for k := range 3 {
		if _, err := ajs.Consumer(ctx, streams.ResponsesStream(k), streams.AccumulateClaimed); err != nil {
			t.Fatalf("accumulate's claimed durable in %s: %v", streams.ResponsesStream(k), err)
		}
	}
	if _, err := ajs.Stream(ctx, streams.StreamResponses); err != nil {
		t.Fatalf("accumulate reading TOOLGATE_RESPONSES' partitions (stream info): %v", err)
	}
}
