package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// FaultExecutorDown is the tool's executor (every process of its executor
// group) stopped for Config.ExecutorDown under load, then started again.
const FaultExecutorDown = "executor-down"

// ExecDown is what the executor-down fault did to the calls.
type ExecDown struct {
	Down      time.Duration // how long the executor was stopped
	Budget    time.Duration // execute's retry budget: the sum of its nak delays up to MaxDeliver
	Waited    int           // calls accepted before the executor came back whose first execution came after
	WaitP50   time.Duration // how long they waited: first execution - max(accepted, stopped)
	WaitMax   time.Duration
	FirstRun  time.Duration // from the restart to the first execution request; -1: none
	Exhausted int           // calls dead-lettered by execute because no executor answered within the budget
	// CircuitOpened is from the stop to the first executor group's circuit
	// seen open (its durable, as `toolgate status` reads it); -1: never
	// while it was down. Circuits names the groups seen open.
	CircuitOpened time.Duration
	Circuits      []string
	stopped       time.Time
	started       time.Time
}

// retryBudget is how long execute keeps a call whose executor does not
// answer before it dead-letters it: the worker's nak delays for the
// deliveries up to MaxDeliver (its default backoff, as streams sets no
// BackOff of execute's own).
func retryBudget() time.Duration {
	var d time.Duration
	for n := 1; n < streams.DefaultSettings().MaxDeliver; n++ {
		d += worker.Backoff(uint64(n))
	}
	return d
}

// executorDown stops the executor for cfg.ExecutorDown and starts it again.
// A down time at or over the retry budget is carried out all the same: the
// calls it dead-letters are counted (Exhausted), and the replay runs them.
func (h *clusterHavoc) executorDown(ctx context.Context, _ *rand.Rand) error {
	d := h.cfg.ExecutorDown
	budget := retryBudget()
	if d >= budget {
		h.logf("warning: executor down %v is not under execute's retry budget %v: calls will be dead-lettered (counted, and replayed)", d, budget)
	}
	// The fault before is timed to its first executed call: let the
	// pipeline execute again (up to a minute) before the executor goes, so
	// that figure is the fault's own and not this outage's.
	h.mu.Lock()
	last := h.last
	h.mu.Unlock()
	_ = testenv.Poll(time.Minute, 50*time.Millisecond, func() error {
		if _, ok := h.exe.FirstRunAfter(last); !ok {
			return errors.New("chaos: nothing executed since the last fault")
		}
		return nil
	})
	t0 := time.Now()
	h.exe.Stop()
	h.logf("executor stopped for %v: toolgate.exec.> has no responders", d)
	breakers := watchCircuits(ctx, h.js, t0)
	select {
	case <-time.After(d): // the outage's length, not a wait for a condition
	case <-ctx.Done():
	}
	opened, groups := breakers()
	if err := h.exe.Start(); err != nil {
		return err
	}
	up := time.Now()
	h.logf("executor started again after %v", up.Sub(t0).Round(time.Millisecond))
	h.mu.Lock()
	h.rep.ExecDown = &ExecDown{Down: up.Sub(t0), Budget: budget, FirstRun: -1, CircuitOpened: opened, Circuits: groups, stopped: t0, started: up}
	h.mu.Unlock()
	h.record(Fault{Kind: FaultExecutorDown, Target: "executor", when: up, Note: fmt.Sprintf("down %v; times from the restart", up.Sub(t0).Round(time.Millisecond))})
	return ctx.Err()
}

// measure fills the waits and the dead-lettered count from the run's
// results, letters, acceptance times and first executions.
func (e *ExecDown) measure(results []result, letters []dlq.Letter, acceptedAt, firstRun map[string]time.Time) {
	var waits []time.Duration
	for _, r := range results {
		if r.CallID == "" {
			continue
		}
		at, ok := acceptedAt[r.ResponseID]
		run, ran := firstRun[r.CallID]
		if !ok || !ran || !at.Before(e.started) || run.Before(e.started) {
			continue
		}
		from := at
		if from.Before(e.stopped) {
			from = e.stopped
		}
		waits = append(waits, run.Sub(from))
	}
	slices.Sort(waits)
	e.Waited = len(waits)
	if len(waits) > 0 {
		e.WaitP50, e.WaitMax = waits[len(waits)/2], waits[len(waits)-1]
	}
	e.FirstRun = -1
	for _, t := range firstRun {
		if t.After(e.started) && (e.FirstRun < 0 || t.Sub(e.started) < e.FirstRun) {
			e.FirstRun = t.Sub(e.started)
		}
	}
	for _, l := range letters {
		if l.Stage == streams.Execute && strings.Contains(strings.Join(l.Errors, " "), "no executor listens") {
			e.Exhausted++
		}
	}
}

// watchCircuits polls the executor groups' durables from t0 until the
// returned func is called, which says when a circuit was first seen open
// (-1: never) and which groups were.
func watchCircuits(ctx context.Context, js jetstream.JetStream, t0 time.Time) func() (time.Duration, []string) {
	read := metrics.JetStreamExecutorGroups(js)
	stop := make(chan struct{})
	done := make(chan struct{})
	first := time.Duration(-1)
	seen := map[string]bool{}
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			groups, err := read(ctx)
			if err != nil {
				continue // a node down or a leader moving: the next look
			}
			for _, g := range groups {
				if g.Circuit != metrics.CircuitClosed {
					if first < 0 {
						first = time.Since(t0)
					}
					seen[g.Group] = true
				}
			}
		}
	}()
	return func() (time.Duration, []string) {
		close(stop)
		<-done
		names := slices.Sorted(maps.Keys(seen))
		return first, names
	}
}
