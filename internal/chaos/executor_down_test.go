package chaos

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// A stopped executor leaves toolgate.exec.> without responders (what
// execute reads as "not run", and retries); started again it answers and
// counts the call once.
func TestExecutor_stop_leaves_no_responders_and_start_answers_again(t *testing.T) {
	ns, err := testenv.StartNATS(testenv.NATSOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	nc, err := nats.Connect(ns.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	x, err := NewExecutor(nc, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	req := func() error {
		m := nats.NewMsg(streams.Exec("create_invoice"))
		m.Header.Set(streams.HeaderCallID, "c-0")
		m.Header.Set(streams.HeaderIdemKey, "k-0")
		_, err := nc.RequestMsg(m, 2*time.Second)
		return err
	}
	x.Stop()
	if err := req(); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("request to a stopped executor: %v, want no responders", err)
	}
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	if err := req(); err != nil {
		t.Fatalf("request after the start: %v", err)
	}
	if r := x.Runs()["c-0"]; r != 1 {
		t.Errorf("runs of c-0: %d, want 1 (the request while stopped never reached it)", r)
	}
	if _, ok := x.FirstRuns()["c-0"]; !ok {
		t.Error("no first-run time for c-0")
	}
}

// The executor-down figures: only calls accepted before the restart and
// first executed after it waited, each from its acceptance or the stop,
// whichever is later; execute's dead letters for want of an executor are
// counted.
func TestExecDown_measure(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Second))) }
	e := &ExecDown{stopped: s(10), started: s(40)}
	results := []result{
		{ResponseID: "r1", CallID: "r1-0"}, // accepted before the stop, run after: waits from the stop
		{ResponseID: "r2", CallID: "r2-0"}, // accepted during, run after: waits from its acceptance
		{ResponseID: "r3", CallID: "r3-0"}, // run before the stop
		{ResponseID: "r4", CallID: "r4-0"}, // accepted after the restart
		{ResponseID: "r5", CallID: "r5-0"}, // never run
		{ResponseID: "r6"},                 // a response-level result
	}
	accepted := map[string]time.Time{"r1": s(5), "r2": s(30), "r3": s(1), "r4": s(41), "r5": s(20), "r6": s(20)}
	first := map[string]time.Time{"r1-0": s(40.5), "r2-0": s(41), "r3-0": s(2), "r4-0": s(41.5)}
	letters := []dlq.Letter{
		{Stage: streams.Execute, Failure: "max_deliver", Errors: []string{"execute: the tool did not receive the call: no executor listens on toolgate.exec.x"}},
		{Stage: streams.Validate, Failure: "schema_invalid", Errors: []string{"no executor listens"}},
		{Stage: streams.Execute, Failure: "outcome_unknown", Errors: []string{"timeout"}},
	}
	e.measure(results, letters, accepted, first)
	if e.Waited != 2 || e.WaitMax != 30500*time.Millisecond || e.WaitP50 != 30500*time.Millisecond {
		t.Errorf("waited %d, p50 %v, max %v; want 2 calls, 30.5s max (r1 from the stop)", e.Waited, e.WaitP50, e.WaitMax)
	}
	if e.FirstRun != 500*time.Millisecond {
		t.Errorf("first run %v after the restart, want 500ms", e.FirstRun)
	}
	if e.Exhausted != 1 {
		t.Errorf("exhausted %d, want 1 (execute's letter only)", e.Exhausted)
	}
}

// The retry budget is what execute gives an absent executor today:
// 250ms doubling to 30s over MaxDeliver 10, about 92 s, and the default
// executor-down fault stays under it.
func TestRetryBudget(t *testing.T) {
	if b := retryBudget(); b != 91750*time.Millisecond {
		t.Errorf("retry budget %v, want 1m31.75s", b)
	}
	var c Config
	c.setDefaults()
	if c.ExecutorDown >= retryBudget() {
		t.Errorf("default executor down %v is not under the budget", c.ExecutorDown)
	}
}
