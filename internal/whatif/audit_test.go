package whatif

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"
)

// TestRunAudit_as_the_console_user: the console's what-if reads the status
// records and the audit events — what the console user may read: in the
// calls' results, and on the audit stream for older ones, each call counted
// once wherever its event is — and
// reports what the what-if over the raw input reports; a call whose audit
// arguments are redacted is counted as not re-evaluated, never run on the
// redacted values.
func TestRunAudit_as_the_console_user(t *testing.T) {
	admin, console := adminAndConsole(t)
	ctx := context.Background()
	ins, recs := day(t, 21)
	kv, err := admin.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	old := evaluator(t, oldTools)
	for i, in := range ins {
		if _, err := kv.Put(ctx, call.ID(fmt.Sprint("r", i), 0), recs[i]); err != nil {
			t.Fatal(err)
		}
		// The audit event of the call's ending, as the emitter makes it.
		e := old.Evaluate(ctx, mustEnvelopes(t, in)[0])[0]
		var sensitive []string
		if i == 3 { // a transfer of 700 whose amount is sensitive: redacted in the audit
			sensitive = []string{"amount"}
		}
		audit := pipeline.AuditOf("policy", e, sensitive)
		// Where it is: in the call's result (issue 30), on the audit stream
		// only (a call of before the upgrade), or both (--audit-stream).
		if i%3 != 1 {
			data, _ := json.Marshal(pipeline.Result{CallID: e.CallID, ResponseID: e.ResponseID, Tool: e.ToolName, Status: e.Status, Audit: &audit})
			m := nats.NewMsg(streams.Results(e.Request.Tenant, e.ResponseID))
			m.Header.Set(streams.HeaderCallID, e.CallID)
			m.Data = data
			if _, err := admin.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if i%3 != 0 {
			data, _ := json.Marshal(audit)
			m := nats.NewMsg(streams.Audit(string(e.Status)))
			m.Header.Set(streams.HeaderCallID, e.CallID)
			m.Data = data
			if _, err := admin.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	ev := evaluator(t, newToolsLimits)
	rep, err := RunAudit(ctx, AuditSource{JS: console, Since: time.Now().Add(-time.Hour)}, ev)
	if err != nil {
		t.Fatalf("as the console user: %v", err)
	}
	if rep.Skipped[SkipRedacted] != 1 || len(rep.Skipped) != 1 {
		t.Fatalf("not re-evaluated %v, want the one redacted call", rep.Skipped)
	}
	// The raw input's what-if, without that one call: the same counts.
	want := inMemory(t, ev, append(append([]input{}, ins[:3]...), ins[4:]...), append(append([][]byte{}, recs[:3]...), recs[4:]...))
	strip := func(r *Report) string {
		r.Skipped = map[string]int{}
		for _, tr := range r.Tools {
			tr.Skipped = map[string]int{}
		}
		b, _ := json.Marshal(r.JSON())
		return string(b)
	}
	if got, exp := strip(rep), strip(want); got != exp {
		t.Fatalf("from the audit:\n%s\nfrom the raw input:\n%s", got, exp)
	}
	// At most MaxCalls records are held; the rest are counted.
	cut, err := RunAudit(ctx, AuditSource{JS: console, Since: time.Now().Add(-time.Hour), MaxCalls: 5}, ev)
	if err != nil || cut.Skipped[SkipCut] != 16 {
		t.Fatalf("bounded run: %v %v", err, cut.Skipped)
	}
}

// A call's audit event read from its result and again from the audit
// stream (--audit-stream), and a replay's later event, are one call: the
// first event of the fewest replays is kept; a call of no record of the
// window is not held.
func TestAuditEvents_one_per_call_wherever_it_was_read(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	recs := map[string]*Recorded{"r1-0": {}, "r2-0": {}}
	a := auditEvents{recs: recs, first: map[string]pipeline.AuditEvent{}}
	first := pipeline.AuditEvent{CallID: "r1-0", OccurredAt: at, RawArgumentsRedacted: `{"a":1}`}
	replay := pipeline.AuditEvent{CallID: "r1-0", OccurredAt: at.Add(time.Hour), Replays: 1, RawArgumentsRedacted: `{"a":2}`}
	res, _ := json.Marshal(pipeline.Result{CallID: "r1-0", Audit: &replay})
	a.result(res)
	old, _ := json.Marshal(first)
	a.event(old)
	a.event(old)
	other, _ := json.Marshal(pipeline.AuditEvent{CallID: "r2-0", OccurredAt: at.Add(-time.Minute)})
	a.event(other)
	stranger, _ := json.Marshal(pipeline.Result{CallID: "r9-0", Audit: &pipeline.AuditEvent{CallID: "r9-0"}})
	a.result(stranger)
	got := a.ordered()
	if len(got) != 2 || got[0].CallID != "r2-0" || got[1].CallID != "r1-0" || got[1].RawArgumentsRedacted != `{"a":1}` {
		t.Fatalf("events %+v: want r2-0, then r1-0's first (replays 0)", got)
	}
}
