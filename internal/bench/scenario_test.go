package bench_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/benchrig"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

func startRig(t *testing.T) *benchrig.Rig {
	t.Helper()
	r, err := benchrig.Start(benchrig.Options{Dir: t.TempDir(), ToolsFile: "../../examples/tools.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("pipeline: %v", err)
		}
	})
	return r
}

func positive(t *testing.T, what string, v float64) {
	t.Helper()
	if !(v > 0) || math.IsInf(v, 0) {
		t.Errorf("%s = %v, want a positive finite number", what, v)
	}
}

// TestScenarios_every_call_has_exactly_one_result runs each cost-curve
// scenario tiny against the real pipeline: Run fails on a missing, failed
// or duplicate result, and the results stream holds exactly one result per
// call under each response's subject.
func TestScenarios_every_call_has_exactly_one_result(t *testing.T) {
	r := startRig(t)
	ctx := context.Background()
	tiny := map[string]int{"args-16k": 3, "args-256k": 2, "parallel-8": 2, "invoice-1": 2, "limits-2": 2, "stream-500": 1}
	for _, s := range bench.Scenarios() {
		n, ok := tiny[s.Name]
		if !ok {
			t.Fatalf("scenario %s has no tiny count in this test", s.Name)
		}
		c, err := s.Run(ctx, r.Target, "t-", n)
		if err != nil {
			t.Fatal(err)
		}
		if c.Responses != n || c.Calls != n*s.CallsPer {
			t.Errorf("%s: %d responses, %d calls; want %d, %d", s.Name, c.Responses, c.Calls, n, n*s.CallsPer)
		}
		for what, v := range map[string]float64{"calls/s": c.CallsPerSec, "CPU/call": float64(c.CPUPerCall), "provider B/call": c.BodyPerCall,
			"NATS B/call": c.NATSPerCall, "CPU/KiB": float64(c.CPUPerKiB), "p99": float64(c.P99)} {
			positive(t, s.Name+" "+what, v)
		}
		if c.NATSPerCall < c.BodyPerCall {
			t.Errorf("%s: NATS carried %.0f B/call, less than the %.0f B/call of provider output it was sent", s.Name, c.NATSPerCall, c.BodyPerCall)
		}
	}
	st, err := r.JS.Stream(ctx, streams.StreamResults)
	if err != nil {
		t.Fatal(err)
	}
	// A scenario ends when its last result reaches the generator's
	// subscription, which can be a moment before the results stream has
	// stored it.
	var info *jetstream.StreamInfo
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if info, err = st.Info(ctx, jetstream.WithSubjectFilter(streams.ResultsAll())); err != nil {
			return err
		}
		if n := len(info.State.Subjects); n < 3+2+2+2+2+1 {
			return fmt.Errorf("the results stream holds results of %d responses so far", n)
		}
		return nil
	})
	per := map[string]int{"args-16k": 1, "args-256k": 1, "parallel-8": 8, "invoice-1": 1, "limits-2": 1, "stream-500": 1}
	seen := 0
	for subj, count := range info.State.Subjects {
		rid := subj[strings.LastIndex(subj, ".")+1:]
		name := strings.TrimPrefix(rid[:strings.LastIndex(rid, "-")], "t-")
		if want := per[name]; int(count) != want {
			t.Errorf("%s holds %d results, want %d", subj, count, want)
		}
		seen++
	}
	if want := 3 + 2 + 2 + 2 + 2 + 1; seen != want {
		t.Errorf("results for %d responses, want %d: %v", seen, want, info.State.Subjects)
	}
}

// TestTail_offered_load_separates_handler_wait_gc_and_generator runs a
// tiny paced load and reads what step 3 prints from it.
func TestTail_offered_load_separates_handler_wait_gc_and_generator(t *testing.T) {
	r := startRig(t)
	h0, err := bench.ReadHandlerTimes(r.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	gc0 := bench.ReadGC()
	st, bd, err := bench.LoadWithBreakdown(context.Background(), r.NC, r.JS, "tail-", 25, 250)
	if err != nil {
		t.Fatal(err)
	}
	h1, err := bench.ReadHandlerTimes(r.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Late) != 25 {
		t.Fatalf("%d lateness figures for 25 paced publishes", len(st.Late))
	}
	for _, l := range st.Late {
		if l < 0 {
			t.Fatalf("a publish left %v before its schedule", l)
		}
	}
	rows := bd.Rows(h1.Sub(h0))
	byStage := map[string]bench.StageRow{}
	for _, row := range rows {
		byStage[row.Stage] = row
	}
	for _, s := range []string{streams.Accumulate, streams.Parse, streams.Execute, bench.RowResult} {
		row, ok := byStage[s]
		if !ok || row.Calls == 0 {
			t.Fatalf("no %s row: %+v", s, rows)
		}
		positive(t, s+" step mean", float64(row.StepMean))
		if s != bench.RowResult {
			positive(t, s+" handler mean", float64(row.HandlerMean))
			if row.WaitMean != row.StepMean-row.HandlerMean {
				t.Errorf("%s: wait %v is not step %v less handler %v", s, row.WaitMean, row.StepMean, row.HandlerMean)
			}
		}
	}
	if byStage[streams.Accumulate].Calls != 25 {
		t.Errorf("accumulate row holds %d calls, want every one of 25", byStage[streams.Accumulate].Calls)
	}
	if g := bench.ReadGC().Since(gc0); g.PauseTotal < 0 || g.PauseMax < 0 {
		t.Errorf("GC figures %+v", g)
	}
}

// TestCores_measure_the_four_gates_on_a_valid_call: the gates' total is
// the parse, validate, business and policy cores, and the call ends approved
// (Cores fails otherwise).
func TestCores_measure_the_four_gates_on_a_valid_call(t *testing.T) {
	if err := flag.Set("test.benchtime", "50ms"); err != nil {
		t.Fatal(err)
	}
	r := startRig(t)
	cores, total, err := bench.Cores(r.Tools)
	if err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	var in []string
	for _, c := range cores {
		positive(t, c.Name, float64(c.PerCall))
		positive(t, c.Name+" CPU", float64(c.CPU))
		if c.InGateTotal {
			sum += c.CPU
			in = append(in, c.Name)
		}
	}
	if strings.Join(in, ",") != "parse,validate,business,policy" || sum != total {
		t.Errorf("gates' total %v of %v, want parse,validate,business,policy summing to it (%v)", total, in, sum)
	}
}
