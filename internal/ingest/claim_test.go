package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// wholeMsg is a whole openai-chat response rid of tenant asking the weather
// in city.
func wholeMsg(rid, tenant, city string, seq uint64) worker.Msg {
	h := nats.Header{}
	h.Set(streams.HeaderProvider, "openai-chat")
	h.Set(streams.HeaderResponseID, rid)
	h.Set(streams.HeaderTenant, tenant)
	return worker.Msg{Subject: wire.InResponseFor(tenant), Header: h, Data: fmt.Appendf(nil, weatherBody, city), StreamSeq: seq}
}

// parseInputs are the envelopes outs hand to parse, and whether any of them
// is a refusal of the response id.
func parseInputs(t *testing.T, outs []worker.Output) (envs []call.Envelope, conflict bool) {
	t.Helper()
	for _, o := range outs {
		switch o.Subject {
		case streams.Gate(streams.Parse):
			e, err := call.Unmarshal(o.Data)
			if err != nil {
				t.Fatal(err)
			}
			envs = append(envs, e)
		case streams.DLQ(streams.Accumulate, CodeResponseIDConflict):
			conflict = true
		}
	}
	return envs, conflict
}

// TestClaim_ids_are_per_tenant_and_claims_from_before_are_read: a response
// id claimed by one tenant is free in another, whose calls get call ids and
// a batch of their own (issue 28); and a tenant's response claimed under
// the bare id before claims were per tenant, arriving again (a redelivery
// across the upgrade), keeps the call ids it was first given, so its
// idempotency keys, status record and approval stay the same.
func TestClaim_ids_are_per_tenant_and_claims_from_before_are_read(t *testing.T) {
	r := newStreamRig(t, 30*time.Second)
	a := gate(r.js, time.Minute)
	ctx := context.Background()
	old := wholeMsg("old-1", "acme", "Oslo", 1)
	// What accumulate stored before: the claim under the bare id.
	kv, err := r.js.KeyValue(ctx, streams.BucketResponseIDs)
	if err != nil {
		t.Fatal(err)
	}
	legacy := claimWhole(a.senderOn(old.Subject, old.Header, time.Now()), old.Data)
	data, _ := json.Marshal(legacy)
	if _, err := kv.Create(ctx, "old-1", data); err != nil {
		t.Fatal(err)
	}
	outs, err := a.Handle(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	envs, conflict := parseInputs(t, outs)
	if conflict || len(envs) != 1 || envs[0].CallID != "old-1-0" || envs[0].Batch.ID != "old-1" {
		t.Fatalf("redelivery of a response claimed before: conflict %v, envelopes %+v, want call old-1-0 as first made", conflict, envs)
	}
	// Another tenant, the same id and body: its own calls, no conflict.
	outs, err = a.Handle(ctx, wholeMsg("old-1", "globex", "Oslo", 2))
	if err != nil {
		t.Fatal(err)
	}
	envs, conflict = parseInputs(t, outs)
	if conflict || len(envs) != 1 || envs[0].CallID != "globex=old-1-0" || envs[0].Batch.ID != "globex=old-1" {
		t.Fatalf("another tenant: conflict %v, envelopes %+v, want call globex=old-1-0", conflict, envs)
	}
	// Within one tenant an id is still used once.
	outs, err = a.Handle(ctx, wholeMsg("old-1", "globex", "Bergen", 3))
	if err != nil {
		t.Fatal(err)
	}
	if envs, conflict = parseInputs(t, outs); !conflict || len(envs) != 0 {
		t.Fatalf("the same tenant's other content: conflict %v, envelopes %+v, want refused", conflict, envs)
	}
}
