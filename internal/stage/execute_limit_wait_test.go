package stage

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// chargeOnePer2s is "charge" under a limit of one call per 2 s that waits.
const chargeOnePer2s = chargeTool + `    limits:
      - {name: one_per_2s, window: 2s, count: 1, on_exceed: wait, max_wait: 30s}
`

// A call a limit holds (on_exceed: wait) says so in its status record while
// it waits — what it waits for, which limit, when it fits — which `toolgate
// status`, the console's limits page and the call's story read; once it
// runs, its history keeps the wait step naming the limit.
func TestExecute_call_held_by_a_limit_says_which_in_its_status_record(t *testing.T) {
	r := newExecRigTools(t, chargeOnePer2s, func(n int32, c toolserver.Call) (any, error) {
		return map[string]any{"n": n}, nil
	})
	r.startInProcess()
	r.publishApproved(approvedCall("held", 0, `{"amount":1}`), "held-0")
	r.waitResults("held", 1)
	r.publishApproved(approvedCall("held", 1, `{"amount":2}`), "held-1")
	kv, err := r.js.KeyValue(r.ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	var rec pipeline.StatusRecord
	testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		e, err := kv.Get(r.ctx, "held-1")
		if err != nil {
			return err
		}
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			return err
		}
		if rec.Waiting == nil {
			return fmt.Errorf("call is %s, not waiting", rec.Status)
		}
		return nil
	})
	w := rec.Waiting
	if w.For != pipeline.WaitLimit || w.Limit != "one_per_2s" || w.Stage != streams.Execute || w.Next.IsZero() ||
		!strings.HasPrefix(w.Detail, "limit one_per_2s: 1 of 1 per 2s used; this call fits from ") {
		t.Fatalf("waiting %+v, want the limit one_per_2s and when the call fits", *w)
	}
	rs := r.waitResults("held", 2)
	if rs[1]["status"] != string(call.Executed) {
		t.Fatalf("second call %v, want executed once the window allowed", rs[1]["status"])
	}
	if h := string(mustJSON(t, rs[1]["history"])); !strings.Contains(h, "waiting: limit one_per_2s: 1 of 1 per 2s used") {
		t.Fatalf("history %s keeps no wait step naming the limit", h)
	}
}
