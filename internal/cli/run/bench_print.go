package run

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/bench"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// printReport prints a bench run: the runs, where the time went at the
// offered load, the cost curve, the pure cores and the goals.
func printReport(w io.Writer, r bench.Report) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/1e3) }
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| run | calls | calls/s | p50 | p95 | p99 |\n|---|---|---|---|---|---|")
	for _, s := range r.Runs {
		fmt.Fprintf(w, "| %s | %d | %.0f | %s | %s | %s |\n", s.Name, s.Calls, s.CallsPerSec, ms(s.P50), ms(s.P95), ms(s.P99))
	}
	fmt.Fprintln(w, "\n| ceiling | msgs/s (each run) | best msgs/s | p99 through the hops |\n|---|---|---|---|")
	for _, c := range r.Ceilings {
		each := make([]string, len(c.Rates))
		for i, v := range c.Rates {
			each[i] = fmt.Sprintf("%.0f", v)
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %s |\n", c.Layout, strings.Join(each, ", "), c.Best.CallsPerSec, ms(c.Best.P99))
	}
	fmt.Fprintf(w, "one stream for all hops (the pipeline's layout today) carries %.0f %% less than the machine's ceiling\n", r.Pipeline.LayoutPenalty)
	fmt.Fprintf(w, "pipeline / ceiling: %.0f %% (against the one-stream ceiling: %.0f %%)\n", r.Pipeline.PerCeiling, r.Pipeline.PerOneStream)
	fmt.Fprintf(w, "CPU per 1,000 calls: %.2f s (%s)\n", r.Pipeline.CPUPer1000, cpuWhat(r.NATS))
	switch tr := r.Traffic; {
	case r.NoCounters != "":
		fmt.Fprintf(w, "NATS per call: ceiling %.1f stores; pipeline %.1f stores (the mix), with gates that cost nothing pipeline / ceiling could reach %.0f %% if every store cost the same; messages per call unavailable (%s)\n",
			tr.Ceiling.Stores, tr.Pipeline.Stores, tr.StoreBound(), r.NoCounters)
	case tr.Pipeline.Messages > 0:
		fmt.Fprintf(w, "NATS per call: ceiling %.1f messages, %.1f stores; pipeline %.1f messages, %.1f stores (the mix); with gates that cost nothing, pipeline / ceiling could reach %.0f %% if every message cost the same, %.0f %% if every store did\n",
			tr.Ceiling.Messages, tr.Ceiling.Stores, tr.Pipeline.Messages, tr.Pipeline.Stores, tr.Bound(), tr.StoreBound())
		if len(tr.Pipeline.StoresBy) > 0 {
			fmt.Fprintf(w, "pipeline stores per call by stream: %s\n", bench.FormatStoresBy(tr.Pipeline.StoresBy))
			if ex := tr.Pipeline.ExecutorStores(); ex > 0 {
				fmt.Fprintf(w, "of the pipeline's %.1f stores per call, toolgate's %.1f and the executors' %.1f (their records of the requests they took, %s, written by pkg/toolserver)\n",
					tr.Pipeline.Stores, tr.Pipeline.Stores-ex, ex, bench.ExecutorStream)
			}
		}
	}
	printCluster(w, r.Traffic)
	printMemory(w, r)

	t := r.Tail
	fmt.Fprintf(w, "\nwhere the time went at %.0f calls/s (step: history, previous transition to this stage's; handler: the stage's handler runs; wait: step mean - handler mean):\n", t.OfferedRate)
	fmt.Fprint(w, bench.FormatRows(t.Stages))
	fmt.Fprintf(w, "GC in this process during step 3: %d cycles, %d stop-the-world pauses, %s in all, longest ≤ %s\n", t.GC.Cycles, t.GC.Pauses, ms(t.GC.PauseTotal), ms(t.GC.PauseMax))
	fmt.Fprintf(w, "CPU per 1,000 calls at this load: %.2f s (%s)\n", t.CPUPer1000, r.NATS.CPUWhat())
	fmt.Fprintf(w, "load generator lateness against its schedule: p50 %s, p99 %s, max %s\n", ms(t.LateP50), ms(t.LateP99), ms(t.LateMax))

	if len(r.Scenarios) > 0 {
		fmt.Fprintf(w, "\ncost curve (CPU: %s; bytes: provider output, and what every client sent NATS):\n", r.NATS.CPUWhat())
		fmt.Fprintln(w, "| scenario | calls | calls/s | p50 | p99 | CPU/call | provider B/call | NATS B/call | CPU per provider KiB |\n|---|---|---|---|---|---|---|---|---|")
		for _, c := range r.Scenarios {
			perKiB := "–"
			if c.PerKiB {
				perKiB = us(c.CPUPerKiB)
			}
			natsB := fmt.Sprintf("%.0f", c.NATSPerCall)
			if r.NoCounters != "" {
				natsB = "unavailable"
			}
			fmt.Fprintf(w, "| %s | %d | %.0f | %s | %s | %s | %.0f | %s | %s |\n", c.Name, c.Calls, c.CallsPerSec, ms(c.P50), ms(c.P99), us(c.CPUPerCall), c.BodyPerCall, natsB, perKiB)
		}
	}
	fmt.Fprintln(w, "\nlongest time a stage stood still, ready for input while input waited on its consumer, per step:")
	fmt.Fprint(w, bench.FormatStandStills(r.StandStills))
	fmt.Fprintln(w, "\npure cores on one valid OpenAI chat create_invoice call (testing.Benchmark; CPU: the process's CPU time per call, GC included; wall: elapsed, which a loaded machine inflates):")
	fmt.Fprintln(w, "| core | function | CPU per call | wall per call | allocs | bytes |\n|---|---|---|---|---|---|")
	for _, c := range r.Cores {
		name := c.Name
		switch {
		case c.InGateTotal:
			name += " *"
		case c.Trust == bench.TrustToolgate:
			name += " †"
		case c.Trust == bench.TrustExecutor:
			name += " (the executor's)"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %d |\n", name, c.What, us(c.CPU), us(c.PerCall), c.AllocsPer, c.BytesPer)
	}
	fmt.Fprintf(w, "* in the gates' total (CPU): %s\n", us(r.GatesPerCall))
	fmt.Fprintf(w, "† in toolgate's trust CPU per valid call: %s; the executor's check, apart: %s\n", us(r.TrustPerCall), us(r.ExecutorTrust))
	fmt.Fprintln(w)
	fmt.Fprint(w, bench.FormatGoals(r.Goals))
}

func scenarioNames() string {
	var names []string
	for _, s := range bench.Scenarios() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// pickScenarios reads --scenarios: all, none, or names.
func pickScenarios(list string) ([]bench.Scenario, error) {
	all := bench.Scenarios()
	switch strings.TrimSpace(list) {
	case "all", "":
		return all, nil
	case "none":
		return nil, nil
	}
	var out []bench.Scenario
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, s := range all {
			if s.Name == name {
				out, found = append(out, s), true
				break
			}
		}
		if !found {
			return nil, cmdutil.UsageError("--scenarios: unknown scenario %q (scenarios: %s, all, none)", name, scenarioNames())
		}
	}
	return out, nil
}

// cpuWhat says whose CPU step 2's figure sums.
func cpuWhat(p bench.NATSPlace) string {
	if p == bench.NATSEmbedded {
		return "this process, embedded NATS included, plus redis-server"
	}
	return p.CPUWhat()
}

// printMemory prints the peak RSS: of this process, and of a nats-server
// child apart; the goal is judged on toolgate's own (issue 30).
func printMemory(w io.Writer, r bench.Report) {
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	p := r.Pipeline
	switch r.NATS {
	case bench.NATSChild:
		fmt.Fprintf(w, "peak memory (RSS): toolgate's own (this process) %.0f MiB after steps 1-3, %.0f MiB after the scenarios; nats-server's (the child process) %.0f MiB, %.0f MiB\n",
			mib(p.PeakRSS), mib(p.PeakRSSLast), mib(p.NATSPeakRSS), mib(p.NATSPeakRSSLast))
	case bench.NATSCluster:
		fmt.Fprintf(w, "peak memory (RSS): toolgate's own (this process) %.0f MiB after steps 1-3, %.0f MiB after the scenarios; the three nats-servers' peaks summed %.0f MiB, %.0f MiB\n",
			mib(p.PeakRSS), mib(p.PeakRSSLast), mib(p.NATSPeakRSS), mib(p.NATSPeakRSSLast))
	case bench.NATSExternal:
		fmt.Fprintf(w, "peak memory (RSS): toolgate's own (this process) %.0f MiB after steps 1-3, %.0f MiB after the scenarios; nats-server's: external, not measured\n",
			mib(p.PeakRSS), mib(p.PeakRSSLast))
	default:
		fmt.Fprintf(w, "peak memory (RSS of this process, the embedded nats-server included; --nats %s prints them apart): %.0f MiB after steps 1-3, %.0f MiB after the scenarios\n",
			natsChild, mib(p.PeakRSS), mib(p.PeakRSSLast))
	}
}
