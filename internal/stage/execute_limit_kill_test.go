package stage

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
)

// chargeLimited is the tool "charge" under a count limit of 100 per hour
// (issue 33): the limit's charges live in the idempotency store, with the
// execution claims.
const chargeLimited = chargeTool + `    limits:
      - {name: burst, window: 1h, count: 100}
`

// A burst of 1,000 approved calls against a count limit of 100, with the
// execute process SIGKILLed in the middle of it (a call held by the tool,
// others claimed and charged, their answers lost) and started again: exactly 100
// charges are used — each call that reached the tool ran once — and the
// other 900 end limit_exceeded.
// Each call has one result; the call the tool held is reconciled, not rerun. On Redis the charge is made by the claim
// script; on the embedded store by compare-and-set, charge first, so a
// process killed between the two finds its own charge on redelivery.
func TestExecute_limit_SIGKILL_mid_burst_still_charges_exactly_100_of_1000(t *testing.T) {
	for name, env := range map[string][]string{
		"redis":    nil,
		"embedded": {"TOOLGATE_REDIS_URL="},
	} {
		t.Run(name, func(t *testing.T) {
			const calls, limit, killAt = 1000, 100, 40
			held, killed := make(chan struct{}), make(chan struct{})
			var release sync.Once
			unblock := func() { release.Do(func() { close(killed) }) }
			t.Cleanup(unblock)
			r := newExecRigTools(t, chargeLimited, func(n int32, c toolserver.Call) (any, error) {
				if n == killAt {
					close(held)
					<-killed // the tool ran; the process dies before it hears so
				}
				return map[string]any{"call": c.ID}, nil
			})
			first := r.startProcess(env...)
			rid := "burst-" + name
			for i := range calls {
				r.publishApproved(approvedCall(rid, i, `{"amount":5}`), fmt.Sprintf("%s-%d", rid, i))
			}
			select {
			case <-held:
			case <-time.After(60 * time.Second):
				t.Fatalf("the tool ran %d times, never reached call %d", r.effects.Load(), killAt)
			}
			if err := first.Process.Kill(); err != nil { // SIGKILL: no drain, no ack
				t.Fatal(err)
			}
			_ = first.Wait()
			unblock()
			before := len(r.byCall(rid))
			if before >= calls {
				t.Fatalf("all %d calls had a result before the kill: it was not mid-burst", before)
			}

			r.startProcess(env...)
			var got map[string][]map[string]any
			testenv.Eventually(t, 2*time.Minute, 100*time.Millisecond, func() error {
				if got = r.byCall(rid); len(got) < calls {
					return fmt.Errorf("%d of %d calls have a result", len(got), calls)
				}
				return nil
			})
			r.settled(30 * time.Second)
			got = r.byCall(rid)
			status := map[string]int{}
			r.mu.Lock()
			defer r.mu.Unlock()
			for id, rs := range got {
				if len(rs) != 1 {
					t.Errorf("call %s has %d results, want 1", id, len(rs))
				}
				st := fmt.Sprint(rs[0]["status"])
				status[st]++
				switch {
				case st == "executed" && r.perCall[id] != 1:
					t.Errorf("call %s executed and was sent to the tool %d times, want once", id, r.perCall[id])
				case st == "limit_exceeded" && r.perCall[id] != 0:
					t.Errorf("call %s ended limit_exceeded and was sent to the tool %d times", id, r.perCall[id])
				case st == "outcome_unknown" && r.perCall[id] > 1:
					t.Errorf("call %s ended outcome_unknown and was sent to the tool %d times", id, r.perCall[id])
				case st != "executed" && st != "limit_exceeded" && st != "outcome_unknown":
					t.Errorf("call %s ended %s: %v", id, st, rs[0]["errors"])
				}
			}
			t.Logf("%d calls had a result before the kill; after: %v; tool ran %d times, %d status queries", before, status, r.effects.Load(), r.queries.Load())
			// Exactly 100 charges are used: by the calls that ran, and by any
			// the killed process claimed and lost before it sent them, which
			// the tool does not know, so they end outcome_unknown keeping
			// their charge (never run again: it cannot tell "never sent"
			// from "forgot").
			if status["executed"]+status["outcome_unknown"] != limit || status["limit_exceeded"] != calls-limit || len(got) != calls {
				t.Fatalf("statuses %v over %d calls; want %d charged (executed or outcome_unknown) and %d limit_exceeded", status, len(got), limit, calls-limit)
			}
			if n := r.effects.Load(); n > limit || int(n) < status["executed"] {
				t.Fatalf("the tool ran %d times for %d executed calls, limit %d", n, status["executed"], limit)
			}
			if r.queries.Load() == 0 {
				t.Error("no status query: the killed process's claims were never reconciled")
			}
			if len(r.perCall) > limit {
				t.Errorf("%d calls were sent to the tool, over the limit of %d", len(r.perCall), limit)
			}
		})
	}
}
