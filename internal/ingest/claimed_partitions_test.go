package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/natsmap/embedded"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// ridIn is a response id of tenant acme that P = p puts in partition k.
func ridIn(t *testing.T, prefix string, p, k int) string {
	t.Helper()
	for i := range 1000 {
		rid := fmt.Sprint(prefix, i)
		if streams.ResponsePartition("acme", rid, p) == k {
			return rid
		}
	}
	t.Fatalf("no id in partition %d of %d", k, p)
	return ""
}

// With P = 3 accumulate reads every partition: responses stored in each
// run once, a retry after the window is a duplicate found in its
// partition, and a response sent on the batch subject is claimed by a
// claim message the server stores in the id's partition, where the same
// id with other content on the claimed subject is then refused.
func TestClaimedPartitions_each_partition_is_read_and_claims_hold_there(t *testing.T) {
	r, _ := claimedRigP(t, 3)
	p := r.producerOf("acme")
	ctx := context.Background()
	var rids []string
	for k := range 3 {
		rid := ridIn(t, fmt.Sprint("p", k, "-"), 3, k)
		rids = append(rids, rid)
		if err := p.PublishResponse(ctx, weather(rid), weatherIn("Oslo")); err != nil {
			t.Fatal(err)
		}
	}
	for _, rid := range rids {
		if envs := r.parsedN(t, rid, 1); envs[0].CallID != "acme="+rid+"-0" {
			t.Fatalf("call id %s", envs[0].CallID)
		}
	}
	time.Sleep(3 * claimedDedup) // past the duplicate window: only the subject's limit answers
	if err := p.PublishResponse(ctx, weather(rids[2]), weatherIn("Oslo")); !errors.Is(err, producer.ErrDuplicate) {
		t.Fatalf("retry in partition 2: %v, want ErrDuplicate", err)
	}
	batch := weather(ridIn(t, "b-", 3, 1))
	batch.Priority = wire.PriorityBatch
	if err := p.PublishResponse(ctx, batch, weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	r.parsedN(t, batch.ResponseID, 1)
	r.settledAll(t)
	if err := p.PublishResponse(ctx, weather(batch.ResponseID), weatherIn("Evil")); !errors.Is(err, producer.ErrConflict) {
		t.Fatalf("claimed after batch, other content: %v, want ErrConflict", err)
	}
	for _, rid := range append(rids, batch.ResponseID) {
		if n := len(r.parsedFor(rid)); n != 1 {
			t.Fatalf("%s: %d envelopes at parse, want 1", rid, n)
		}
	}
	for k := range 3 {
		if n := r.msgs(t, streams.ResponsesStream(k)); n != map[int]uint64{0: 1, 1: 2, 2: 1}[k] {
			t.Fatalf("%s holds %d messages", streams.ResponsesStream(k), n)
		}
	}
	if n := len(r.deadLetters(t, streams.DLQ(streams.Accumulate, CodeUnprovenClaim))); n != 0 {
		t.Fatalf("accumulate's own claim message in a partition was refused as unproven (%d dead letters)", n)
	}
}

// raise applies the streams at P = 3 over the rig's P = 1 and maps the
// server's claimed subjects to them, in the documented order.
func raise(t *testing.T, r *streamRig) {
	t.Helper()
	set := streams.DefaultSettings()
	set.Storage, set.AckWait, set.DedupWindow, set.Fair.Partitions = jetstream.MemoryStorage, 5*time.Second, claimedDedup, 3
	if err := streams.Ensure(context.Background(), r.js, set); err != nil {
		t.Fatal(err)
	}
	if err := embedded.Apply(r.srv, 3); err != nil {
		t.Fatal(err)
	}
}

// Changing P from 1 to 3: an id claimed before is stored again where P = 3
// puts it (the server does not refuse it there); accumulate reads where
// P = 1 put it, the copy stored first keeps the id, and the later one with
// the same content runs nothing.
func TestClaimedPartitions_after_raising_P_a_retry_runs_once(t *testing.T) {
	r, _ := claimedRigP(t, 1)
	p := r.producerOf("acme")
	ctx := context.Background()
	rid := ridIn(t, "m-", 3, 2)
	if err := p.PublishResponse(ctx, weather(rid), weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	r.parsedN(t, rid, 1)
	r.settledAll(t)
	raise(t, r)
	time.Sleep(3 * claimedDedup) // past the duplicate window of the first copy's outputs
	if err := p.PublishResponse(ctx, weather(rid), weatherIn("Oslo")); err != nil {
		t.Fatalf("the retry after P changed: %v, want stored in its new partition", err)
	}
	if n := r.msgs(t, streams.ResponsesStream(2)); n != 1 {
		t.Fatalf("%s holds %d messages, want the retry", streams.ResponsesStream(2), n)
	}
	r.settledAll(t)
	if n := len(r.parsedFor(rid)); n != 1 {
		t.Fatalf("%d envelopes at parse, want 1: the retry ran again", n)
	}
	if n := r.statusCount(rid, call.ResponseIDConflict); n != 0 {
		t.Fatalf("%d conflicts for the same content", n)
	}
}

// The same with other content: the later copy is a conflict (a result and
// a dead letter), nothing of it runs.
func TestClaimedPartitions_after_raising_P_other_content_is_a_conflict(t *testing.T) {
	r, _ := claimedRigP(t, 1)
	p := r.producerOf("acme")
	ctx := context.Background()
	rid := ridIn(t, "c-", 3, 0) // partition 0: .0 in TOOLGATE_RESPONSES, beside the unsuffixed copy
	if err := p.PublishResponse(ctx, weather(rid), weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	r.parsedN(t, rid, 1)
	r.settledAll(t)
	raise(t, r)
	if err := p.PublishResponse(ctx, weather(rid), weatherIn("Evil")); err != nil {
		t.Fatalf("other content after P changed: %v, want stored in its new partition", err)
	}
	waitDeadLetters(t, r, CodeResponseIDConflict, 1)
	r.settledAll(t)
	for _, e := range r.parsedFor(rid) {
		if strings.Contains(string(e.RawArguments), "Evil") {
			t.Fatalf("the conflicting copy ran: %s", e.RawArguments)
		}
	}
	if n := r.statusCount(rid, call.ResponseIDConflict); n != 1 {
		t.Fatalf("%d response_id_conflict results, want 1", n)
	}
}

// A producer may publish on its claimed subjects with a partition (the
// server checks permissions on the mapped subject): a copy in a partition
// the mapping would not pick is refused (bad_subject), so an id is never
// claimed twice by choosing partitions; the one the mapping picked runs.
func TestClaimedPartitions_a_copy_in_another_partition_is_refused(t *testing.T) {
	r, _ := claimedRigP(t, 3)
	ctx := context.Background()
	rid := ridIn(t, "x-", 3, 1)
	if err := r.producerOf("acme").PublishResponse(ctx, weather(rid), weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	m := &nats.Msg{Subject: wire.ClaimedPartitionSubject(wire.InTenantClaimed("acme", rid), 2), Header: nats.Header{}, Data: weatherIn("Oslo")}
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	if _, err := r.js.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitDeadLetters(t, r, CodeBadSubject, 1)
	r.settledAll(t)
	if n := len(r.parsedFor(rid)); n != 1 {
		t.Fatalf("%d envelopes at parse, want the mapped copy's 1", n)
	}
}
