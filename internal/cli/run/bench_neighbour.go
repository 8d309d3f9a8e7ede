package run

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/benchrig"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// benchNeighbour runs issue 37's scenarios on a pipeline with tenants noisy
// and quiet listed (a fairness lane each): the quiet tenant at quietRate
// alone and during a noisy burst of burst calls, then during a batch
// backlog of its own.
func benchNeighbour(burst int, quietRate float64, redisURL, tools string) error {
	if quietRate <= 0 {
		return cmdutil.UsageError("--quiet-rate must be positive")
	}
	dir, err := os.MkdirTemp("", "toolgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rig, err := benchrig.Start(benchrig.Options{Dir: dir, RedisURL: redisURL, ToolsFile: tools, Fair: streams.Fair{Tenants: []string{"noisy", "quiet"}}})
	if err != nil {
		return err
	}
	defer rig.Close()
	// The quiet tenant's producer has a connection of its own, as it would
	// beside another tenant's.
	quiet, err := nats.Connect(rig.NATS.URL(), nats.Name("toolgate bench quiet tenant"))
	if err != nil {
		return err
	}
	defer quiet.Close()
	ctx := context.Background()
	fmt.Printf("machine: %s\n", bench.Machine())
	drained := map[string]float64{}
	for _, sc := range []struct {
		name string
		n    bench.Neighbour
	}{
		{"noisy neighbour: quiet tenant interactive, noisy tenant's burst", bench.Neighbour{QuietTenant: "quiet", BurstTenant: "noisy", QuietRate: quietRate, Alone: 5 * time.Second, Burst: burst}},
		{"priority: quiet tenant interactive, its own batch backlog", bench.Neighbour{QuietTenant: "quiet", BurstTenant: "quiet", BurstPriority: streams.PriorityBatch, QuietRate: quietRate, Alone: 5 * time.Second, Burst: burst}},
	} {
		fmt.Printf("%s: %.0f calls/s, burst of %d\n", sc.name, quietRate, burst)
		sc.n.Gaps, sc.n.QuietConn = rig.Metrics.TakeLongestGaps, quiet
		f, err := sc.n.Run(ctx, rig.NC, rig.JS, fmt.Sprintf("nb%d-", time.Now().UnixNano()))
		if err != nil {
			return err
		}
		for _, s := range []bench.Stats{f.QuietAlone, f.QuietDuring, f.QuietPublishing, f.QuietStored} {
			fmt.Printf("  %-30s %5d calls  p50 %8v  p99 %8v\n", s.Name, s.Count, s.Percentile(50).Round(100*time.Microsecond), s.Percentile(99).Round(100*time.Microsecond))
		}
		ratio := 0.0
		if p := f.QuietAlone.Percentile(99); p > 0 {
			ratio = float64(f.QuietDuring.Percentile(99)) / float64(p)
		}
		fmt.Printf("  quiet p99 during / alone: %.1fx\n", ratio)
		fmt.Printf("  burst drained: %d calls in %v = %.0f calls/s (published in %v)\n", f.Burst.Count, f.Burst.Elapsed.Round(time.Millisecond), f.Burst.Rate(), f.Published.Round(time.Millisecond))
		drained[sc.name[:strings.Index(sc.name, ":")]] = f.Burst.Rate()
		fmt.Printf("  lost %d, twice %d\n", f.Lost, f.Twice)
		for _, h := range []struct {
			name string
			h    bench.Histo
		}{{"alone", f.SchedAlone}, {"during the burst", f.SchedDuring}} {
			fmt.Printf("  goroutines waited to run %-16s p50 %8v  p99 %8v  p99.9 %8v  (%d wakeups)\n", h.name, h.h.Quantile(.5).Round(time.Microsecond), h.h.Quantile(.99).Round(time.Microsecond), h.h.Quantile(.999).Round(time.Microsecond), h.h.Count)
		}
		for _, g := range []struct {
			name string
			gaps map[string]time.Duration
		}{{"alone", f.GapsAlone}, {"during the burst", f.GapsDuring}} {
			fmt.Printf("  longest stand-still %-16s", g.name)
			for _, st := range slices.Sorted(maps.Keys(g.gaps)) {
				fmt.Printf(" %s %v", st, g.gaps[st].Round(100*time.Microsecond))
			}
			fmt.Println()
		}
		fmt.Printf("  where the quiet calls' time went alone (step: history, previous transition to this stage's):\n")
		fmt.Print(bench.FormatRows(f.QuietAloneStages))
		fmt.Printf("  and during the burst:\n")
		fmt.Print(bench.FormatRows(f.QuietDuringStages))
		fmt.Printf("  of them, sent while the burst was published:\n")
		fmt.Print(bench.FormatRows(f.QuietPublishingStages))
	}
	// Then the burst alone, on the same rig, warm as the scenarios found
	// it: the pipeline's maximum for these calls, fairness lanes on, which
	// each scenario's drain rate is a share of (issue 37: at least 90 %).
	ref, err := bench.Neighbour{BurstTenant: "noisy", Burst: burst}.Run(ctx, rig.NC, rig.JS, fmt.Sprintf("nb%d-", time.Now().UnixNano()))
	if err != nil {
		return err
	}
	fmt.Printf("the burst alone (the pipeline's maximum for these calls): %d calls in %v = %.0f calls/s; lost %d, twice %d\n",
		ref.Burst.Count, ref.Burst.Elapsed.Round(time.Millisecond), ref.Burst.Rate(), ref.Lost, ref.Twice)
	for _, name := range slices.Sorted(maps.Keys(drained)) {
		fmt.Printf("  %s: the burst drained at %s of that (goal: at least 90 %%)\n", name, share(drained[name], ref.Burst.Rate()))
	}
	return nil
}

// share is part as a percentage of whole, "-" without a whole.
func share(part, whole float64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*part/whole)
}
