package gates

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/limit"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/worker"
)

func limitedTool(t *testing.T, ls ...limit.Limit) execTools {
	return execTools{"refund": compiled(t, tool.Definition{Name: "refund", Limits: ls})}
}

func kvStore(t *testing.T) *idem.KV {
	s := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, s)
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "idem", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return idem.NewKV(kv)
}

// 1,000 calls at once against a count limit of 100, at the gate: exactly
// 100 run and 900 end limit_exceeded, on Redis and on the embedded store.
func TestExecute_limit_exactly_100_of_1000_concurrent_calls_run(t *testing.T) {
	for name, store := range map[string]func(*testing.T) idem.Store{
		"redis": func(t *testing.T) idem.Store { return redisStore(t) },
		"kv":    func(t *testing.T) idem.Store { return kvStore(t) },
	} {
		t.Run(name, func(t *testing.T) {
			ex := &countingExec{}
			var events sync.Map
			x := newExecute(t, store(t), ex, limitedTool(t, limit.Limit{Name: "burst", Key: "tenant", Window: "1h", Count: 100}))
			x.LimitEvent = func(l, ev string, _ float64) {
				n, _ := events.LoadOrStore(l+"/"+ev, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
			var executed, exceeded atomic.Int64
			var wg sync.WaitGroup
			sem := make(chan struct{}, 64)
			for i := range 1000 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					e := unsealed(fmt.Sprintf("burst-%d", i), 0, "refund", `{"amount":5}`)
					e.Request.Tenant = "acme"
					out, err := x.Handle(context.Background(), sealed(e))
					if err != nil {
						t.Errorf("call %d: %v", i, err)
						return
					}
					switch out[0].Status {
					case call.Executed:
						executed.Add(1)
					case call.LimitExceeded:
						exceeded.Add(1)
						if !strings.Contains(strings.Join(out[0].Errors, " "), "limit burst: 100 of 100 per 1h used; this call fits from ") {
							t.Errorf("errors %q", out[0].Errors)
						}
					default:
						t.Errorf("call %d ended %s %v", i, out[0].Status, out[0].Errors)
					}
				}()
			}
			wg.Wait()
			if executed.Load() != 100 || exceeded.Load() != 900 || ex.runs.Load() != 100 {
				t.Fatalf("executed %d, limit_exceeded %d, executor runs %d; want 100, 900, 100", executed.Load(), exceeded.Load(), ex.runs.Load())
			}
			for ev, want := range map[string]int64{"burst/charged": 100, "burst/rejected": 900} {
				n, _ := events.Load(ev)
				if n == nil || n.(*atomic.Int64).Load() != want {
					t.Errorf("%s counted %v, want %d", ev, n, want)
				}
			}
		})
	}
}

// A redelivered or replayed call that ran is not charged again: with a
// limit of 1 it gets its stored answer, and the limit stays at 1.
func TestExecute_limit_redelivered_call_is_not_charged_twice(t *testing.T) {
	store := redisStore(t)
	ex := &countingExec{}
	lim := limit.Limit{Name: "one", Window: "1h", Count: 1}
	tools := limitedTool(t, lim)
	e := approved("once", 0, "refund", `{"amount":5}`)
	for i := range 3 { // a fresh replica each time: no process memory
		out, err := newExecute(t, store, ex, tools).Handle(context.Background(), e)
		if err != nil || out[0].Status != call.Executed {
			t.Fatalf("delivery %d: %v %v", i, out, err)
		}
	}
	u, err := store.LimitUsage(context.Background(), limit.Charge{Limit: "one", Key: "", Window: time.Hour})
	if err != nil || u.Used != 1 || ex.runs.Load() != 1 {
		t.Fatalf("usage %+v %v runs %d: want 1 charge and 1 run", u, err, ex.runs.Load())
	}
}

// An executor that refuses before running (not reached, cannot run) gives
// the charge back: the next call fits. One that ran and lost its answer
// (outcome_unknown) keeps it.
func TestExecute_limit_call_not_run_gets_its_charge_back(t *testing.T) {
	store := redisStore(t)
	tools := limitedTool(t, limit.Limit{Name: "one", Window: "1h", Count: 1})
	for _, c := range []struct {
		name string
		err  error
	}{
		{"not_reached", fmt.Errorf("%w: no responders", execute.ErrNotRun)},
		{"cannot_run", fmt.Errorf("%w: %w: destination refused", execute.ErrNotRun, execute.ErrCannotRun)},
	} {
		_, err := newExecute(t, store, &countingExec{err: c.err}, tools).Handle(context.Background(), approved("back-"+c.name, 0, "refund", `{}`))
		if err == nil {
			t.Fatalf("%s: want the worker told to retry or dead-letter", c.name)
		}
		if u, _ := store.LimitUsage(context.Background(), limit.Charge{Limit: "one", Window: time.Hour}); u.Used != 0 {
			t.Fatalf("%s: usage %d after a call that did not run, want 0", c.name, u.Used)
		}
	}
	ex := &countingExec{}
	out, err := newExecute(t, store, ex, tools).Handle(context.Background(), approved("back-ok", 0, "refund", `{}`))
	if err != nil || out[0].Status != call.Executed {
		t.Fatalf("the next call: %v %v", out, err)
	}
	// lost answer: outcome unknown keeps the charge
	store2 := redisStore(t)
	lost := &countingExec{err: fmt.Errorf("execute: timeout")}
	out, err = newExecute(t, store2, lost, tools).Handle(context.Background(), approved("lost", 0, "refund", `{}`))
	if err != nil || out[0].Status != call.OutcomeUnknown {
		t.Fatalf("lost answer: %v %v", out, err)
	}
	if u, _ := store2.LimitUsage(context.Background(), limit.Charge{Limit: "one", Window: time.Hour}); u.Used != 1 {
		t.Fatalf("outcome_unknown usage %d, want the charge kept", u.Used)
	}
}

// on_exceed: wait holds the call (a nak with the delay until it fits)
// within max_wait, and rejects it when it cannot fit in time.
func TestExecute_limit_wait_holds_then_rejects(t *testing.T) {
	store := redisStore(t)
	ex := &countingExec{}
	tools := limitedTool(t, limit.Limit{Name: "slow", Window: "1s", Count: 1, OnExceed: "wait", MaxWait: "5s"})
	x := newExecute(t, store, ex, tools)
	if out, err := x.Handle(context.Background(), approved("w", 0, "refund", `{}`)); err != nil || out[0].Status != call.Executed {
		t.Fatalf("first: %v %v", out, err)
	}
	second := approved("w", 1, "refund", `{}`)
	_, err := x.Handle(context.Background(), second)
	var we *worker.Error
	if err == nil || !strings.Contains(err.Error(), "retry in") || errors.As(err, &we) {
		t.Fatalf("second: %v, want held for redelivery (not a failure)", err)
	}
	time.Sleep(1100 * time.Millisecond)
	if out, err := x.Handle(context.Background(), second); err != nil || out[0].Status != call.Executed {
		t.Fatalf("second after the window: %v %v", out, err)
	}
	// one that arrived longer than max_wait ago is rejected
	late := unsealed("w", 2, "refund", `{}`)
	late.History[len(late.History)-1].At = time.Now().Add(-10 * time.Second)
	out, err := x.Handle(context.Background(), sealed(late))
	if err != nil || out[0].Status != call.LimitExceeded {
		t.Fatalf("late: %v %v, want limit_exceeded", out, err)
	}
}
