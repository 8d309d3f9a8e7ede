package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// TestClaimed_a_retry_after_the_window_is_a_duplicate_and_runs_once: a
// tenant's response goes on its claimed subject and runs; the same
// response again after the duplicate window is refused by the subject's
// one-message limit, read back and reported ErrDuplicate, and nothing
// runs twice. The claim cost no key-value write and nothing in TOOLGATE_IN.
func TestClaimed_a_retry_after_the_window_is_a_duplicate_and_runs_once(t *testing.T) {
	r, _ := claimedRig(t)
	p := r.producerOf("acme")
	ctx := context.Background()
	if err := p.PublishResponse(ctx, weather("r1"), weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	if envs := r.parsedN(t, "r1", 1); envs[0].CallID != "acme=r1-0" {
		t.Fatalf("call id %s, want acme=r1-0 (call.Key as before)", envs[0].CallID)
	}
	time.Sleep(3 * claimedDedup) // past the duplicate window: only the subject's limit answers
	err := p.PublishResponse(ctx, weather("r1"), weatherIn("Oslo"))
	if !errors.Is(err, producer.ErrDuplicate) || !strings.Contains(err.Error(), "stored at") {
		t.Fatalf("retry after the window: %v, want ErrDuplicate read back from the claimed subject", err)
	}
	r.settledAll(t)
	if n := len(r.parsedFor("r1")); n != 1 {
		t.Fatalf("%d envelopes at parse, want 1", n)
	}
	if n := r.msgs(t, "KV_"+streams.BucketResponseIDs); n != 0 {
		t.Fatalf("the response-ids bucket holds %d claims, want none on the claimed path", n)
	}
	if n := r.msgs(t, streams.StreamIn); n != 0 {
		t.Fatalf("TOOLGATE_IN holds %d messages, want none", n)
	}
	if n := r.msgs(t, streams.StreamResponses); n != 1 {
		t.Fatalf("TOOLGATE_RESPONSES holds %d messages, want the one response", n)
	}
}

// TestClaimed_other_content_under_a_used_id_is_refused_at_publish: the
// producer hears ErrConflict at once; nothing is stored and nothing of it
// runs (no result either: nothing reached accumulate).
func TestClaimed_other_content_under_a_used_id_is_refused_at_publish(t *testing.T) {
	r, _ := claimedRig(t)
	p := r.producerOf("acme")
	ctx := context.Background()
	if err := p.PublishResponse(ctx, weather("r2"), weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	r.parsedN(t, "r2", 1)
	if err := p.PublishResponse(ctx, weather("r2"), weatherIn("Evil")); !errors.Is(err, producer.ErrConflict) {
		t.Fatalf("other content: %v, want ErrConflict", err)
	}
	r.settledAll(t)
	if envs := r.parsedFor("r2"); len(envs) != 1 || strings.Contains(string(envs[0].RawArguments), "Evil") {
		t.Fatalf("envelopes at parse %+v, want only the first content", envs)
	}
	if n := r.msgs(t, streams.StreamResponses); n != 1 {
		t.Fatalf("TOOLGATE_RESPONSES holds %d messages, want 1", n)
	}
}

// TestClaimed_tenants_ids_are_independent: tenant A's id does not hold
// tenant B's: each runs under its own key.
func TestClaimed_tenants_ids_are_independent(t *testing.T) {
	r, _ := claimedRig(t)
	ctx := context.Background()
	if err := r.producerOf("acme").PublishResponse(ctx, weather("same"), weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	if err := r.producerOf("globex").PublishResponse(ctx, weather("same"), weatherIn("Bergen")); err != nil {
		t.Fatalf("another tenant, the same id: %v", err)
	}
	envs := r.parsedN(t, "same", 2)
	ids := map[string]bool{}
	for _, e := range envs {
		ids[e.CallID] = true
	}
	if !ids["acme=same-0"] || !ids["globex=same-0"] {
		t.Fatalf("call ids %v, want one per tenant", ids)
	}
}

// TestClaimed_legacy_then_claimed_with_other_content_is_a_conflict: a
// response sent on the tenant's batch subject is claimed by accumulate's
// claim message; the same id with other content on the claimed subject is
// then refused at publish, and with the same content it is a duplicate.
func TestClaimed_legacy_then_claimed_with_other_content_is_a_conflict(t *testing.T) {
	r, _ := claimedRig(t)
	p := r.producerOf("acme")
	ctx := context.Background()
	batch := weather("l1")
	batch.Priority = wire.PriorityBatch
	if err := p.PublishResponse(ctx, batch, weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	r.parsedN(t, "l1", 1)
	r.settledAll(t)
	if err := p.PublishResponse(ctx, weather("l1"), weatherIn("Evil")); !errors.Is(err, producer.ErrConflict) {
		t.Fatalf("claimed after legacy, other content: %v, want ErrConflict", err)
	}
	time.Sleep(3 * claimedDedup)
	if err := p.PublishResponse(ctx, weather("l1"), weatherIn("Oslo")); !errors.Is(err, producer.ErrDuplicate) {
		t.Fatalf("claimed after legacy, the same content: %v, want ErrDuplicate", err)
	}
	r.settledAll(t)
	if n := len(r.parsedFor("l1")); n != 1 {
		t.Fatalf("%d envelopes at parse, want 1", n)
	}
	if n := len(r.deadLetters(t, streams.DLQ(streams.Accumulate, CodeUnprovenClaim))); n != 0 {
		t.Fatalf("accumulate's own claim message was refused as unproven (%d dead letters)", n)
	}
}

// TestClaimed_claimed_then_legacy_with_other_content_is_a_conflict: the
// other order: the legacy arrival finds the claimed subject held by a
// response of other content and ends response_id_conflict.
func TestClaimed_claimed_then_legacy_with_other_content_is_a_conflict(t *testing.T) {
	r, _ := claimedRig(t)
	p := r.producerOf("acme")
	ctx := context.Background()
	if err := p.PublishResponse(ctx, weather("l2"), weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	r.parsedN(t, "l2", 1)
	batch := weather("l2")
	batch.Priority = wire.PriorityBatch
	if err := p.PublishResponse(ctx, batch, weatherIn("Evil")); err != nil {
		t.Fatal(err) // stored in TOOLGATE_IN: accumulate refuses it
	}
	waitDeadLetters(t, r, CodeResponseIDConflict, 1)
	// The same content on the batch subject: it holds the same claim, and
	// runs under the same call ids (the idempotency keys then hold it).
	if err := p.PublishResponse(ctx, batch, weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	r.settledAll(t)
	for _, e := range r.parsedFor("l2") {
		if strings.Contains(string(e.RawArguments), "Evil") || e.CallID != "acme=l2-0" {
			t.Fatalf("envelope %s %s at parse", e.CallID, e.RawArguments)
		}
	}
	if n := r.statusCount("l2", call.ResponseIDConflict); n != 1 {
		t.Fatalf("%d response_id_conflict results, want 1", n)
	}
}

// TestClaimed_a_claim_of_before_the_upgrade_is_read: a key-value claim
// written before the claimed subjects, with other content, refuses a
// response on the claimed path; the bucket is only read.
func TestClaimed_a_claim_of_before_the_upgrade_is_read(t *testing.T) {
	r, a := claimedRig(t)
	ctx := context.Background()
	kv, err := r.js.KeyValue(ctx, streams.BucketResponseIDs)
	if err != nil {
		t.Fatal(err)
	}
	other := wholeMsg("k1", "acme", "Bergen", 1)
	old := claimWhole(a.senderOn(wire.InTenantResponse("acme"), other.Header, time.Now()), other.Data)
	old.At = time.Now().UTC()
	data, _ := json.Marshal(old)
	if _, err := kv.Create(ctx, call.Key("acme", "k1"), data); err != nil {
		t.Fatal(err)
	}
	if err := r.producerOf("acme").PublishResponse(ctx, weather("k1"), weatherIn("Oslo")); err != nil {
		t.Fatal(err) // the server knows nothing of the bucket: accumulate refuses it
	}
	waitDeadLetters(t, r, CodeResponseIDConflict, 1)
	r.settledAll(t)
	if n := len(r.parsedFor("k1")); n != 0 {
		t.Fatalf("%d envelopes at parse, want none", n)
	}
	if n := r.msgs(t, "KV_"+streams.BucketResponseIDs); n != 1 {
		t.Fatalf("the bucket holds %d claims, want the one of before", n)
	}
}

// TestClaimed_a_forged_claim_message_is_refused_and_recorded: a producer
// may publish on its own claimed subjects, so a headers-only claim message
// there without accumulate's tag is bad input: a rejected result and a
// dead letter, never passed over in silence.
func TestClaimed_a_forged_claim_message_is_refused_and_recorded(t *testing.T) {
	r, _ := claimedRig(t)
	m := &nats.Msg{Subject: wire.InTenantClaimed("acme", "f1"), Header: nats.Header{}}
	m.Header.Set(HeaderClaimKind, "response")
	m.Header.Set(HeaderClaimHash, strings.Repeat("0", 64))
	m.Header.Set(HeaderClaimAt, time.Now().UTC().Format(time.RFC3339Nano))
	m.Header.Set(HeaderClaimTag, "k1:forged")
	if _, err := r.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	waitDeadLetters(t, r, CodeUnprovenClaim, 1)
	r.settledAll(t)
	if n := r.statusCount("f1", call.Rejected); n != 1 {
		t.Fatalf("%d rejected results of f1, want 1: %+v", n, r.resultsFor("f1"))
	}
}

// TestClaimed_a_forged_claim_message_is_never_taken_as_a_claim: a claim
// message without accumulate's tag holds its subject (the server keeps the
// first message), but when a response arrives on another path under that
// id, its hash is not read as the claim, even when it is the very hash the
// response's content has: the forgery matches nothing (a conflict).
func TestClaimed_a_forged_claim_message_is_never_taken_as_a_claim(t *testing.T) {
	r, _ := claimedRig(t)
	p := r.producerOf("acme")
	ctx := context.Background()
	batch := weather("g1")
	batch.Priority = wire.PriorityBatch
	if err := p.PublishResponse(ctx, batch, weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	r.parsedN(t, "g1", 1)
	// The hash accumulate's claim gives this sender's content (the same
	// under any id), read from its claim message of g1.
	own, err := r.nc.Request(wire.ClaimedLast(wire.InTenantClaimed("acme", "g1")), nil, 5*time.Second)
	if err != nil || own.Header.Get(HeaderClaimHash) == "" {
		t.Fatalf("accumulate's claim message of g1: %v %v", own, err)
	}
	m := &nats.Msg{Subject: wire.InTenantClaimed("acme", "g2"), Header: nats.Header{}}
	for _, h := range []string{HeaderClaimKind, HeaderClaimHash, HeaderClaimAt} {
		m.Header.Set(h, own.Header.Get(h))
	}
	m.Header.Set(HeaderClaimTag, "k1:forged")
	if _, err := r.js.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	batch.ResponseID = "g2"
	if err := p.PublishResponse(ctx, batch, weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	r.settledAll(t)
	if n := r.statusCount("g2", call.ResponseIDConflict); n != 1 {
		t.Fatalf("%d response_id_conflict results of g2, want 1: %+v", n, r.resultsFor("g2"))
	}
	if n := len(r.parsedFor("g2")); n != 0 {
		t.Fatalf("%d envelopes of g2 at parse: the forged claim was taken as the response's own", n)
	}
}

// TestClaimed_a_streams_id_then_a_whole_response_is_a_conflict: a stream
// claims its id at assembly (a claim message of kind stream); a whole
// response under that id is then refused at publish.
func TestClaimed_a_streams_id_then_a_whole_response_is_a_conflict(t *testing.T) {
	r, _ := claimedRig(t)
	p := r.producerOf("acme")
	ctx := context.Background()
	var evs [][]byte
	for _, e := range weatherStream("Oslo") {
		evs = append(evs, []byte(e))
	}
	if err := p.PublishStream(ctx, producer.Meta{Provider: "anthropic", ResponseID: "s1"}, evs, ""); err != nil {
		t.Fatal(err)
	}
	r.parsedN(t, "s1", 1)
	if err := p.PublishResponse(ctx, weather("s1"), weatherIn("Oslo")); !errors.Is(err, producer.ErrConflict) {
		t.Fatalf("a whole response under a stream's id: %v, want ErrConflict", err)
	}
	r.settledAll(t)
	if n := len(r.parsedFor("s1")); n != 1 {
		t.Fatalf("%d envelopes at parse, want 1", n)
	}
}

// TestClaimed_a_dead_letter_replayed_after_a_fix_runs_once: input of a
// claimed subject refused (here: over the body limit) cannot go back to its
// own subject, which it still holds: dlq replays it on the tenant's
// response subject with its id, where the claim compares equal content and
// goes on, once the limit is raised; replayed twice, it runs once.
func TestClaimed_a_dead_letter_replayed_after_a_fix_runs_once(t *testing.T) {
	r, a := claimedRig(t)
	tight := gate(r.js, time.Hour)
	tight.Emit, tight.MaxBody = a.Emit, 16
	r.swap(tight)
	ctx := context.Background()
	if err := r.producerOf("acme").PublishResponse(ctx, weather("d1"), weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	waitDeadLetters(t, r, "too_large", 1)
	r.settledAll(t)
	r.swap(a) // the fix: the default limit
	letters, err := dlq.List(ctx, r.js, dlq.Filter{})
	if err != nil || len(letters) != 1 {
		t.Fatalf("dead letters %d %v", len(letters), err)
	}
	for range 2 {
		sum, err := dlq.Replay(ctx, r.js, letters, dlq.Options{})
		if err != nil || sum.Replayed != 1 || sum.Items[0].Subject != wire.InTenantResponse("acme") {
			t.Fatalf("replay: %v %+v", err, sum)
		}
	}
	envs := r.parsedN(t, "d1", 1)
	r.settledAll(t)
	if n := len(r.parsedFor("d1")); n != 1 || envs[0].CallID != "acme=d1-0" {
		t.Fatalf("%d envelopes at parse (%s), want 1 under the claimed call id", n, envs[0].CallID)
	}
	if n := len(r.deadLetters(t, streams.DLQ(streams.Accumulate, CodeResponseIDConflict))); n != 0 {
		t.Fatalf("the replay was refused as a conflict (%d)", n)
	}
}
