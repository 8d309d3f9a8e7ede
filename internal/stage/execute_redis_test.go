package stage

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
)

// Redis is killed and restarted (with no persistence: every claim is lost)
// while calls are executing. No call is sent to the tool twice, and every
// call ends with exactly one terminal result: executed when its answer was
// in hand, outcome_unknown when it could not be decided — never lost.
func TestExecute_redis_restarted_mid_run_runs_nothing_twice_and_loses_nothing(t *testing.T) {
	const n = 24
	// The fifth call on holds the tool until Redis is down: those calls are
	// in flight, their answers come back to an execute stage without Redis.
	redisDown := make(chan struct{})
	var down atomic.Bool
	var answered, answeredDown atomic.Int32
	r := newExecRig(t, func(k int32, c toolserver.Call) (any, error) {
		time.Sleep(40 * time.Millisecond)
		if k >= 5 {
			<-redisDown
		}
		if down.Load() {
			answeredDown.Add(1)
		}
		answered.Add(1)
		return map[string]any{"call": c.ID}, nil
	})
	r.startInProcess()
	for i := range n {
		r.publishApproved(approvedCall("resp-redis", i, fmt.Sprintf(`{"amount":%d}`, i+1)), fmt.Sprintf("redis-%d", i))
	}
	// Let some calls run and one reach the tool, then take Redis away.
	testenv.Eventually(t, 20*time.Second, 5*time.Millisecond, func() error {
		if r.effects.Load() < 5 {
			return fmt.Errorf("%d calls reached the tool so far", r.effects.Load())
		}
		return nil
	})
	r.rds.Stop()
	down.Store(true)
	if got := len(r.byCall("resp-redis")); got >= n {
		t.Fatalf("all %d calls had ended before Redis stopped: nothing proven", got)
	}
	held := r.effects.Load() - answered.Load()
	close(redisDown)
	// Redis stays down until every call in flight at the tool has answered.
	testenv.Eventually(t, 20*time.Second, 5*time.Millisecond, func() error {
		if answeredDown.Load() < held {
			return fmt.Errorf("%d of %d calls in flight answered while Redis was down", answeredDown.Load(), held)
		}
		return nil
	})
	if held < 1 {
		t.Fatal("no call was at the tool when Redis stopped: nothing proven")
	}
	down.Store(false)
	r.rds.Start()

	r.waitResults("resp-redis", n)
	r.settled(60 * time.Second)
	all := r.byCall("resp-redis")
	if len(all) != n {
		t.Fatalf("%d calls have results, want %d", len(all), n)
	}
	statuses := map[string]int{}
	r.mu.Lock()
	for i := range n {
		id := fmt.Sprintf("resp-redis-%d", i)
		rs := all[id]
		if len(rs) != 1 {
			t.Fatalf("call %s has %d results, want exactly 1", id, len(rs))
		}
		st, _ := rs[0]["status"].(string)
		statuses[st]++
		if sent := r.perCall[id]; sent > 1 {
			t.Fatalf("call %s was sent to the tool %d times", id, sent)
		}
		switch st {
		case "executed":
			if r.perCall[id] != 1 {
				t.Fatalf("call %s ended executed but was sent %d times", id, r.perCall[id])
			}
		case "outcome_unknown":
		default:
			t.Fatalf("call %s ended %s (%v), want executed or outcome_unknown", id, st, rs[0]["errors"])
		}
	}
	r.mu.Unlock()
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if r.effects.Load() != r.requests.Load() { // the tool works through its queue
			return fmt.Errorf("%d side effects for %d requests", r.effects.Load(), r.requests.Load())
		}
		return nil
	})
	t.Logf("after a Redis restart: %v, %d requests to the tool, %d answered while Redis was down", statuses, r.requests.Load(), answeredDown.Load())
}
