package stage

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/pkg/toolserver"
)

// A worker process is SIGKILLed after the tool ran and before the answer was
// stored. The redelivery lands on a second process, which finds the claim
// pending; once its lease ran out it asks the tool whether the call happened
// (toolserver remembers the key) and records that answer: the call ends
// executed, with the reconciled result, and the tool ran once.
func TestExecute_worker_killed_after_the_tool_ran_does_not_run_it_again(t *testing.T) {
	ran, killed := make(chan struct{}), make(chan struct{})
	var release sync.Once
	unblock := func() { release.Do(func() { close(killed) }) }
	t.Cleanup(unblock) // never leave the tool blocked, even when the test fails early
	r := newExecRig(t, func(n int32, c toolserver.Call) (any, error) {
		if n == 1 {
			close(ran)
			<-killed // the worker dies before it hears the answer
		}
		return map[string]any{"charged": 5, "call": c.ID}, nil
	})
	first := r.startProcess()
	e := approvedCall("resp-kill", 0, `{"amount":5}`)
	r.publishApproved(e, "kill-1")
	select {
	case <-ran:
	case <-time.After(20 * time.Second):
		t.Fatal("the tool was never called")
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL: no drain, no ack
		t.Fatal(err)
	}
	_ = first.Wait()
	unblock()
	if len(r.results("resp-kill")) != 0 {
		t.Fatal("a result was published by the killed worker")
	}

	r.startProcess()
	rs := r.waitResults("resp-kill", 1)
	r.settled(20 * time.Second)
	if rs[0]["status"] != "executed" {
		t.Fatalf("status %v (%v), want executed by reconciliation", rs[0]["status"], rs[0]["errors"])
	}
	var res map[string]any
	if err := json.Unmarshal(mustJSON(t, rs[0]["result"]), &res); err != nil || res["charged"] != float64(5) {
		t.Fatalf("result %v, want the tool's own answer", rs[0]["result"])
	}
	if hist := mustJSON(t, rs[0]["history"]); !strings.Contains(string(hist), "reconciled") {
		t.Fatalf("history %s does not say the call was reconciled", hist)
	}
	if n := r.effects.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
	if n := r.requests.Load(); n != 1 {
		t.Fatalf("toolgate sent the call %d times, want 1", n)
	}
	if r.queries.Load() < 1 {
		t.Fatal("the second worker never asked the tool whether the call happened")
	}
	if all := r.byCall("resp-kill"); len(all["resp-kill-0"]) != 1 {
		t.Fatalf("%d results for the call, want exactly 1", len(all["resp-kill-0"]))
	}
	// The record is completed with the reconciled answer.
	c := redis.NewClient(&redis.Options{Addr: r.rds.Addr})
	defer c.Close()
	rec, found, err := idem.NewRedis(c).Get(context.Background(), idem.Key(e.CallID, e.ToolName, e.Arguments))
	if err != nil || !found || rec.State != idem.Completed || !rec.OK {
		t.Fatalf("idempotency record %+v (found %v, %v), want completed ok", rec, found, err)
	}
}

// Two execute processes share the durable; the same call is published twice
// with different message ids, so JetStream's de-duplication lets both
// through and each process may get one. The tool runs once, and the call has
// one result.
func TestExecute_two_replicas_handed_the_same_call_run_it_once(t *testing.T) {
	r := newExecRig(t, func(n int32, c toolserver.Call) (any, error) {
		time.Sleep(400 * time.Millisecond) // both deliveries are in flight at once
		return map[string]any{"charged": 7}, nil
	})
	r.startProcess()
	r.startProcess()
	e := approvedCall("resp-twin", 0, `{"amount":7}`)
	var wg sync.WaitGroup
	for _, id := range []string{"twin-a", "twin-b"} {
		wg.Add(1)
		go func() { defer wg.Done(); r.publishApproved(e, id) }()
	}
	wg.Wait()
	rs := r.waitResults("resp-twin", 1)
	r.settled(30 * time.Second)
	if rs[0]["status"] != "executed" {
		t.Fatalf("status %v, want executed", rs[0]["status"])
	}
	if n := r.requests.Load(); n != 1 {
		t.Fatalf("toolgate sent the call %d times, want 1", n)
	}
	if n := r.effects.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
	if all := r.byCall("resp-twin"); len(all["resp-twin-0"]) != 1 {
		t.Fatalf("%d results for one call, want 1", len(all["resp-twin-0"]))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
