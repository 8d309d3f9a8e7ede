package stage

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// waitSteps are the wait steps of rec's history, as "stage:status note".
func waitSteps(rec pipeline.StatusRecord) []string {
	var out []string
	for _, h := range rec.History {
		if strings.HasPrefix(h.Note, pipeline.WaitNotePrefix) {
			out = append(out, h.Stage+":"+string(h.Status)+" "+h.Note)
		}
	}
	return out
}

// startWaitRig is the pipeline with no executor for create_invoice yet and
// maxDeliver deliveries per hop.
func startWaitRig(t *testing.T, maxDeliver int) *pipe {
	return startRig(t, rig{serve: []string{"get_weather"}, configure: func(c *Config) { c.Settings.MaxDeliver = maxDeliver }})
}

// record reads the call's status record as it is now.
func (p *pipe) record(callID string) (pipeline.StatusRecord, error) {
	kv, err := p.js.KeyValue(p.ctx, streams.BucketCalls)
	if err != nil {
		return pipeline.StatusRecord{}, err
	}
	e, err := kv.Get(p.ctx, callID)
	if err != nil {
		return pipeline.StatusRecord{}, err
	}
	var rec pipeline.StatusRecord
	return rec, json.Unmarshal(e.Value(), &rec)
}

// waitRecord waits until the call's status record says want.
func (p *pipe) waitRecord(callID string, want call.Status) pipeline.StatusRecord {
	p.t.Helper()
	var rec pipeline.StatusRecord
	testenv.Eventually(p.t, 30*time.Second, 20*time.Millisecond, func() error {
		var err error
		if rec, err = p.record(callID); err != nil {
			return err
		}
		if rec.Status != want {
			return fmt.Errorf("call %s is %s, want %s", callID, rec.Status, want)
		}
		return nil
	})
	return rec
}

// TestPipeline_call_waiting_for_an_executor_says_so_in_its_record: issue 17
// point 3. Before, the record said received, revision 1 of the accumulate
// step, for as long as execute retried.
func TestPipeline_call_waiting_for_an_executor_says_so_in_its_record(t *testing.T) {
	p := startWaitRig(t, 10) // the third attempt comes after 750ms, the tenth after two minutes
	p.publish("wait-exec", "openai-chat", chat("wait-exec", "create_invoice", validInvoice, "tool_calls"))
	var rec pipeline.StatusRecord
	testenv.Eventually(t, 20*time.Second, 20*time.Millisecond, func() error {
		var err error
		if rec, err = p.record("wait-exec-0"); err != nil {
			return err
		}
		if rec.Waiting == nil || rec.Waiting.Attempt < 2 {
			return fmt.Errorf("record %s waiting %+v, want attempt 2 or more", rec.Status, rec.Waiting)
		}
		return nil
	})
	w := rec.Waiting
	if rec.Status != call.Approved || w.Stage != streams.Execute || w.For != pipeline.WaitExecutor || w.Of != 10 ||
		w.Detail != "no executor listens on toolgate.exec.create_invoice" || w.Since.IsZero() || !w.Next.After(w.Since) {
		t.Fatalf("record %s waiting %+v", rec.Status, w)
	}
	steps := waitSteps(rec)
	if len(steps) != w.Attempt || steps[0] != "execute:approved waiting: no executor listens on toolgate.exec.create_invoice (attempt 1 of 10)" {
		t.Fatalf("wait steps %q, want one per attempt up to %d", steps, w.Attempt)
	}
	if !w.Since.Equal(rec.History[len(rec.History)-len(steps)].At) {
		t.Errorf("waiting since %v, want the first wait step's time", w.Since)
	}
	// The executor comes up: the call runs once, the record stops waiting
	// and keeps the waits in its history.
	serveTools(t, p.nc, []string{"create_invoice"}, func(string, toolserver.Call) (any, error) { p.executed.Add(1); return "ok", nil })
	rec = p.waitRecord("wait-exec-0", call.Executed)
	if rec.Waiting != nil || p.executed.Load() != 1 {
		t.Fatalf("executed %d times, record still waiting %+v", p.executed.Load(), rec.Waiting)
	}
	if got := waitSteps(rec); len(got) < 2 || got[0] != steps[0] {
		t.Fatalf("the executed call's history lost its waits: %q", got)
	}
	r := p.waitResults("wait-exec", 1)[0]
	if !strings.Contains(fmt.Sprint(r["history"]), "attempt 1 of 10") {
		t.Errorf("the result's history has no waits: %v", r["history"])
	}
}

// TestPipeline_call_whose_executor_never_comes_is_dead_lettered_with_its_waits:
// after MaxDeliver the call fails, and its record and dead letter keep every
// attempt but the last, which is the failure.
func TestPipeline_call_whose_executor_never_comes_is_dead_lettered_with_its_waits(t *testing.T) {
	p := startWaitRig(t, 4)
	p.publish("wait-never", "openai-chat", chat("wait-never", "create_invoice", validInvoice, "tool_calls"))
	rec := p.waitRecord("wait-never-0", call.Failed)
	if rec.Waiting != nil {
		t.Fatalf("a failed call still waits: %+v", rec.Waiting)
	}
	steps := waitSteps(rec)
	if len(steps) != 3 || !strings.HasSuffix(steps[2], "(attempt 3 of 4)") {
		t.Fatalf("wait steps %q, want attempts 1 to 3 of 4", steps)
	}
	if last := rec.History[len(rec.History)-1]; last.Stage != streams.Execute || last.Status != call.Failed || last.Note != "max_deliver" {
		t.Fatalf("last step %+v", last)
	}
	if n := len(p.dlqAtLeast(streams.DLQ(streams.Execute, "max_deliver"), 1)); n != 1 {
		t.Fatalf("%d dead letters", n)
	}
}

// TestPipeline_call_waiting_for_approval_says_until_when_and_by_whom: the
// record of a call in approval_required says it waits for a decision of the
// admin user until the approval expires; the decision clears it.
func TestPipeline_call_waiting_for_approval_says_until_when_and_by_whom(t *testing.T) {
	p, _, store := startGatedPipeline(t, 0, 0)
	p.publishAs("wait-appr", "delete_customer_account", deleteArgs, "alice", "admin")
	rec := p.waitRecord("wait-appr-0", call.ApprovalRequired)
	a, _, err := store.Get(p.ctx, "wait-appr-0")
	if err != nil {
		t.Fatal(err)
	}
	w := rec.Waiting
	if w == nil || w.Stage != streams.Policy || w.For != pipeline.WaitApproval || !w.Until.Equal(a.ExpiresAt) ||
		!w.Since.Equal(a.RequestedAt) || fmt.Sprint(w.By) != "[admin]" || w.Detail == "" {
		t.Fatalf("waiting %+v, want approval by admin until %v", w, a.ExpiresAt)
	}
	if got := w.Until.Sub(w.Since); got != approval.DefaultTTL {
		t.Errorf("waits %v, want the default approval TTL %v", got, approval.DefaultTTL)
	}
	decide(t, p, store, "wait-appr-0", approval.Approved, "carol", "checked")
	testenv.Eventually(t, 15*time.Second, 20*time.Millisecond, func() error {
		var err error
		if rec, err = p.record("wait-appr-0"); err != nil {
			return err
		}
		if rec.Waiting != nil {
			return errors.New("still waiting after the decision")
		}
		return nil
	})
	if rec.Status == call.ApprovalRequired {
		t.Fatalf("record %s after approval", rec.Status)
	}
}
