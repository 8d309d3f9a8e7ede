package stage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// A fail-fast breaker lets one probe through after the cool-down and fails
// the others; a probe that meets a failure not the executor's (the
// idempotency store, say) frees the next call to probe — it does not leave
// the group failing every call while no probe is out. A call failed fast
// is no success of the executor's.
func TestBreaker_fail_fast_probes_once_and_a_probe_that_met_no_executor_frees_the_next(t *testing.T) {
	s := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, s)
	ctx := context.Background()
	settings := streams.DefaultSettings()
	if err := streams.Ensure(ctx, js, settings); err != nil {
		t.Fatal(err)
	}
	cfg := settings.Config(streams.ExecuteGroupConsumer("erp", 4))
	if _, err := js.CreateOrUpdateConsumer(ctx, streams.StreamExecute, cfg); err != nil {
		t.Fatal(err)
	}
	b := newBreaker(js, cfg, Circuit{Failures: 2, Window: time.Minute, Cooldown: time.Minute}, zerolog.Nop())
	b.failFast = true
	now := time.Now()
	b.now = func() time.Time { return now }
	state := func() string { s, _ := b.State(); return s }
	unavailable := worker.Transient("executor_unavailable", 0, errors.New("no responders"))

	if !b.admit() {
		t.Fatal("closed: a call was failed fast")
	}
	b.observe(unavailable)
	b.observe(unavailable)
	if state() != CircuitOpen || b.admit() {
		t.Fatalf("after 2 failures: %s, admitted; want open, failed fast", state())
	}
	b.observe(nil) // the failed-fast call's handler run
	if state() != CircuitOpen {
		t.Fatalf("a call failed fast closed the circuit: %s", state())
	}
	now = now.Add(2 * time.Minute) // the cool-down is over
	if !b.admit() {
		t.Fatal("half-open: the probe was failed fast")
	}
	if b.admit() {
		t.Fatal("half-open: a second call went while the probe was out")
	}
	b.observe(worker.Transient("idempotency_store", 0, errors.New("redis down"))) // the probe, not the executor's failure
	if !b.admit() {
		t.Fatal("the probe met the idempotency store, not the executor: the next call may probe, and was failed fast")
	}
	b.observe(nil) // the second call, failed fast
	b.observe(nil) // the new probe: executed
	if state() != CircuitClosed || !b.admit() {
		t.Fatalf("after the probe succeeded: %s", state())
	}
}
