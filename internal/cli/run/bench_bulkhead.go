package run

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/benchrig"
	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// bulkheadPicked returns the bulkhead scenarios (issue 38) list names, and
// whether it names only those: they run on a rig of their own instead of
// the steps, as --neighbour does; mixed with the cost curve is refused.
func bulkheadPicked(list string) ([]bench.Bulkhead, bool, error) {
	var out []bench.Bulkhead
	others := 0
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, b := range bench.BulkheadScenarios() {
			if b.Name == name {
				out, found = append(out, b), true
			}
		}
		if !found {
			others++
		}
	}
	if len(out) > 0 && others > 0 {
		return nil, false, cmdutil.UsageError("--scenarios: %s run alone (each on its own pipeline), not with the cost curve", bulkheadNames())
	}
	return out, len(out) > 0, nil
}

func bulkheadNames() string {
	var names []string
	for _, b := range bench.BulkheadScenarios() {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

// benchBulkhead runs each scenario on a fresh pipeline, so one's backlog,
// circuit or durables do not colour the next.
func benchBulkhead(scenarios []bench.Bulkhead, redisURL, tools string) error {
	fmt.Printf("machine: %s\n", bench.Machine())
	for _, b := range scenarios {
		for _, tenants := range []bool{false, true} {
			b.Tenants = tenants
			if err := benchOneBulkhead(b, redisURL, tools); err != nil {
				return err
			}
		}
	}
	return nil
}

func benchOneBulkhead(b bench.Bulkhead, redisURL, tools string) error {
	dir, err := os.MkdirTemp("", "toolgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	x := &bench.Executor{}
	if b.Tool == bench.SlowTool {
		x.Delay = time.Second
	}
	h := map[string]toolserver.Func{b.Tool: x.Serve}
	if b.Down > 0 {
		h[b.Tool] = nil
	}
	var fair streams.Fair
	where := "one tenant: the gates before execute first in, first out"
	if b.Tenants {
		fair.Tenants = []string{bench.BurstTenant, bench.OtherTenant}
		where = "the burst and " + bench.OtherTool + " from two tenants, each its fairness lane (--tenants)"
	}
	rig, err := benchrig.Start(benchrig.Options{Dir: dir, RedisURL: redisURL, ToolsFile: tools, Extra: bench.BulkheadToolsYAML(), Handlers: h, Workers: 32, Fair: fair})
	if err != nil {
		return err
	}
	defer rig.Close()
	fmt.Printf("%s: %s; %s\n", b.Name, b.About, where)
	f, err := b.Run(context.Background(), rig.NC, rig.JS, fmt.Sprintf("bh%d-", time.Now().UnixNano()), x, func() error { return rig.Serve(b.Tool, x.Serve) })
	if err != nil {
		return err
	}
	ms := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	for _, s := range []bench.Stats{f.OtherAlone, f.OtherDuring} {
		fmt.Printf("  %-22s %5d calls  p50 %9s  p99 %9s  max %9s\n", s.Name, s.Count, ms(s.Percentile(50)), ms(s.Percentile(99)), ms(s.Percentile(100)))
	}
	ratio := 0.0
	if p := f.OtherAlone.Percentile(99); p > 0 {
		ratio = float64(f.OtherDuring.Percentile(99)) / float64(p)
	}
	p99 := f.OtherDuring.Percentile(99)
	if b.Control {
		fmt.Printf("  %s p99 during / alone: %.1fx, during %s: the floor of the scenarios with this burst, no goal of its own\n", bench.OtherTool, ratio, ms(p99))
	} else {
		fmt.Printf("  %s p99 during / alone: %.1fx (goal <= 3x), during %s (goal <= 100ms): %s\n", bench.OtherTool, ratio, ms(p99), met(ratio <= 3 && p99 <= 100*time.Millisecond))
	}
	var stretches []string
	for _, st := range f.SlowestOther {
		stretches = append(stretches, st.Stage+" "+ms(st.Time))
	}
	fmt.Printf("  slowest 1%% of %s during, on average, by the stage that ended each stretch: %s\n", bench.OtherTool, strings.Join(stretches, ", "))
	if f.Parsed > 0 {
		fmt.Printf("  %s's calls through parse, the last gate that does not know a call's tool: the last %s after the first publish (%.0f calls/s)\n", b.Tool, ms(f.Parsed), float64(b.Burst)/f.Parsed.Seconds())
		if s := f.OtherWaiting; s.Count > 0 {
			doing := "ran"
			if b.Down > 0 {
				doing = "waited in their group"
			}
			fmt.Printf("  %s published after that, while %s's calls %s: %d calls  p50 %s  p99 %s  max %s (%.1fx alone)\n", bench.OtherTool, b.Tool, doing, s.Count, ms(s.Percentile(50)), ms(s.Percentile(99)), ms(s.Percentile(100)), float64(s.Percentile(99))/float64(max(f.OtherAlone.Percentile(99), 1)))
		}
	}
	fmt.Printf("  %s: %d calls, waited p50 %s  p99 %s  max %s; all done %s after the first publish\n", b.Tool, f.Burst.Count, ms(f.Burst.Percentile(50)), ms(f.Burst.Percentile(99)), ms(f.Burst.Percentile(100)), f.Burst.Elapsed.Round(time.Millisecond))
	fmt.Printf("  executor ran at most %d at once\n", f.PeakConcurrency)
	if b.Down > 0 {
		opened := "never seen open"
		if f.CircuitOpened > 0 {
			opened = fmt.Sprintf("open %s after the first publish (goal <= 5s): %s", ms(f.CircuitOpened), met(f.CircuitOpened <= 5*time.Second))
		}
		fmt.Printf("  circuit: %s\n", opened)
		fmt.Printf("  executor back after %v: the last waiting call ended %s later\n", b.Down, f.Back.Round(time.Millisecond))
	}
	fmt.Printf("  outcomes: executed %d, failed %d %v, lost %d, run twice %d, results twice %d\n", f.Executed, f.Failed, f.Failures, f.Lost, f.Twice, f.Duplicates)
	if f.FirstError != "" {
		fmt.Printf("  first failure: %s\n", f.FirstError)
	}
	return rig.Close()
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// errOr is err, or what f returns when err is nil.
func errOr(err error, f func() error) error {
	if err != nil {
		return err
	}
	return f()
}
