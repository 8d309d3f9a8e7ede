package natsusers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// TestTrust_claimed_subjects_are_each_tenants_own: a tenant's producer
// publishes on its own claimed subjects and reads back, by direct get, what
// holds one of them (pkg/producer's conflict at publish), and may neither
// publish on nor read another tenant's: one tenant can neither squat
// another's ids nor learn that they exist. Accumulate publishes claim
// messages on any tenant's claimed subject and reads them back.
func TestTrust_claimed_subjects_are_each_tenants_own(t *testing.T) {
	s := runConfig(t, trustConfig())
	v := &violations{}
	pnc, pjs := connectAs(t, s, authz.ProducerUser("acme"), v)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := producer.New(pjs).ForTenant("acme")
	m := producer.Meta{Provider: "openai-chat", ResponseID: "r1"}
	if err := p.PublishResponse(ctx, m, []byte(`{"a":1}`)); err != nil {
		t.Fatalf("producer-acme publishing on its claimed subject: %v", err)
	}
	// Its own subject read back: the conflict is told at publish.
	if err := p.PublishResponse(ctx, m, []byte(`{"a":2}`)); !errors.Is(err, producer.ErrConflict) {
		t.Fatalf("producer-acme, other content under its used id: %v, want ErrConflict", err)
	}
	// Globex's subjects: no publish, no read.
	gnc, gjs := connectAs(t, s, authz.ProducerUser("globex"), nil)
	if err := producer.New(gjs).ForTenant("globex").PublishResponse(ctx, m, []byte(`{"g":1}`)); err != nil {
		t.Fatal(err)
	}
	_ = gnc
	victim := wire.InTenantClaimed("globex", "r1")
	testenv.Refused(t, "producer-acme publishing on globex's claimed subject", func() error { return v.about(victim) }, func(ctx context.Context) error {
		_, err := pjs.PublishMsg(ctx, &nats.Msg{Subject: victim, Data: []byte(`{}`)}, jetstream.WithRetryAttempts(0))
		return err
	})
	get := wire.ClaimedLast(victim)
	testenv.Refused(t, "producer-acme reading globex's claimed subject", func() error { return v.about(get) }, func(ctx context.Context) error {
		_, err := pnc.RequestWithContext(ctx, get, nil)
		return err
	})
	// Accumulate claims on any tenant's subject and reads it back.
	anc, ajs := connectAs(t, s, streams.Accumulate, nil)
	h := nats.Header{}
	h.Set("Toolgate-Claim-Kind", "response")
	if _, err := ajs.PublishMsg(ctx, &nats.Msg{Subject: wire.InTenantClaimed("globex", "r2"), Header: h}); err != nil {
		t.Fatalf("accumulate publishing a claim message: %v", err)
	}
	r, err := anc.RequestWithContext(ctx, wire.ClaimedLast(wire.InTenantClaimed("globex", "r2")), nil)
	if err != nil || r.Header.Get("Toolgate-Claim-Kind") != "response" {
		t.Fatalf("accumulate reading a claim back: %v %v", err, r)
	}
}
