package run

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/benchrig"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// BenchCmd measures, in one run on one machine: the ceiling of seven chained
// JetStream hops in each storage layout, the full pipeline under maximum load, latency at half the
// measured maximum rate with where the time went, the cost curve scenarios,
// and issue 20's goals beside their figures.
func BenchCmd(args []string) error {
	fs := cmdutil.WithUsage(flag.NewFlagSet("bench", flag.ContinueOnError), "bench", "")
	n := fs.Int("n", 20000, "calls pushed through the pipeline (and messages through the ceiling)")
	size := fs.Int("size", 1024, "ceiling message size in bytes (about a provider response)")
	half := fs.Duration("half", 10*time.Second, "how long to offer half the maximum rate")
	redisURL := fs.String("redis", cmdutil.Env("TOOLGATE_REDIS_URL", ""), "Redis for idempotency keys; empty: start a redis-server")
	tools := fs.String("tools", "examples/tools.yaml", "tool definitions (the scenarios need create_invoice as in examples/tools.yaml)")
	offered := fs.Float64("rate", 0, "offered load of step 3 in calls/s; 0: half the measured maximum")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the pipeline run to this file")
	scenarioList := fs.String("scenarios", "all", "cost curve scenarios run after step 3, comma separated ("+scenarioNames()+"), all, or none; or instead of the steps the bulkheads' "+bulkheadNames()+" (issue 38)")
	jsonFile := fs.String("json", "", "also write every figure as JSON to this file")
	hops := fs.String("hop-encoding", "binary", "how envelopes travel between gates: binary or json (to compare the two)")
	neighbour := fs.Int("neighbour", 0, "instead of the steps: the noisy-neighbour and priority scenarios (issue 37) with a burst of this many calls (30000 for the goals), tenants noisy and quiet")
	quietRate := fs.Float64("quiet-rate", 20, "with --neighbour: the quiet tenant's calls per second")
	natsAt := fs.String("nats", natsEmbedded, "the nats-server the steps run on: embedded (in this process), "+natsChild+" (a nats-server child process: toolgate's own peak RSS and the server's printed apart, its CPU added), "+natsCluster+" (three nats-server child processes clustered by routes, every stream and bucket R3, as chaos --topology cluster runs them: the servers' counters read from each node's monitoring port and summed, each stream's leader and each node's share of the hops it leads printed; on one machine the three servers share its cores, so read it as a cost measurement, not a throughput), or the URL of an external server, connected to as the other commands connect (the URL's user, TOOLGATE_NATS_USER and TOOLGATE_NATS_PASSWORD, or the admin's password file). The bench applies toolgate's own streams and buckets there and deletes them when it ends, so it refuses a server that already holds any (TOOLGATE_*, KV_toolgate_*, empty ones too): give it a nats-server of its own (not TOOLGATE_NATS_URL: never a deployment's by default)")
	natsMonitor := fs.String("nats-monitor", "", "with --nats URL: where to read the server's message counters (Varz), its monitoring port (http://HOST:8222) or a user of its system account (nats://USER:PASSWORD@HOST:4222); empty: the messages per call are printed as unavailable")
	natsServer := fs.String("nats-server", "", "with --nats "+natsChild+" or "+natsCluster+": the nats-server binary (the version toolgate embeds); empty: built from the module with go build, as make chaos does")
	tenants := fs.String("tenants", "", "the pipeline's tenant list (fairness lanes on, as toolgate up --tenants), comma separated; the steps' calls are the first tenant's: what fair shares cost per call (issue 37)")
	parts := fs.Int("partitions", 1, "partitions of the gate stages' streams the pipeline runs with (as toolgate up --partitions); above 1 the ceiling is measured partitioned too, one stream per hop in each partition: run with 1, 2 and 4 side by side (issue 37)")
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return cmdutil.UsageError("bench takes no operands (got %q)", ops[0])
	}
	if *parts < 1 || *parts > streams.MaxPartitions {
		return cmdutil.UsageError("--partitions %d: want 1 to %d", *parts, streams.MaxPartitions)
	}
	if _, only, _ := bulkheadPicked(*scenarioList); (*natsAt != natsEmbedded || *natsMonitor != "" || *natsServer != "") && (*neighbour > 0 || only) {
		return cmdutil.UsageError("--nats, --nats-monitor and --nats-server are for the steps; --neighbour and the bulkheads run on the embedded server")
	}
	if *neighbour > 0 {
		return benchNeighbour(*neighbour, *quietRate, *redisURL, *tools)
	}
	if bh, only, err := bulkheadPicked(*scenarioList); err != nil || only {
		return errOr(err, func() error { return benchBulkhead(bh, *redisURL, *tools) })
	}
	scenarios, err := pickScenarios(*scenarioList)
	if err != nil {
		return err
	}
	jsonHops, err := stage.JSONHops(*hops)
	if err != nil {
		return cmdutil.UsageError("%v", err)
	}
	if *n <= 0 || *half <= 0 || *size < 0 || *offered < 0 {
		return cmdutil.UsageError("--n and --half must be positive, --size and --rate not negative")
	}

	dir, err := os.MkdirTemp("", "toolgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	at, err := openBenchNATS(ctx, *natsAt, *natsMonitor, *natsServer, dir, *parts)
	if err != nil {
		return err
	}
	defer at.close() // after the rig's Close: the stages stop first
	fair := streams.Fair{Tenants: stage.SplitList(*tenants), Partitions: *parts}
	// The steps' calls are a tenant's, published as pkg/producer does a
	// tenant's whole response: on its claimed subject, the publish being
	// the response-id claim (issue 30). Without a list, tenant
	// bench.Tenant's (no lanes).
	tenant := bench.Tenant
	if len(fair.Tenants) > 0 {
		tenant = fair.Tenants[0]
	}
	rig, err := benchrig.Start(at.withRig(benchrig.Options{Dir: dir, RedisURL: *redisURL, ToolsFile: *tools, JSONHops: jsonHops, Fair: fair}))
	if err != nil {
		return err
	}
	defer rig.Close()
	rep := bench.Report{Machine: bench.Machine(), Started: time.Now().UTC(), Settings: map[string]any{
		"n": *n, "size": *size, "half_s": half.Seconds(), "rate": *offered, "scenarios": *scenarioList, "tools": *tools, "hop_encoding": *hops, "tenants": *tenants, "partitions": *parts},
		NATS: at.place, NoCounters: noCounters(ctx, rig.Counters)}

	fmt.Printf("machine: %s\n", rep.Machine)
	fmt.Println(at.describe())
	printLeaderMoves(os.Stdout, rig.Leaders)
	fmt.Printf("1/4 ceiling: %d messages of %d B through %d chained JetStream hops (file storage, fetch batch 100, async publish), in each layout of %s, twice in the order A B B A\n", *n, *size, bench.Hops, layoutNames(*parts))
	ceilings, err := bench.Ceilings(ctx, rig.Counters, rig.NC, rig.JS, *n, *size, bench.FileStorage(at.opts.Replicas), *parts)
	if err != nil {
		return err
	}
	rep.Ceilings = ceilings
	best, one := bench.Highest(ceilings), ceilings[bench.OneStream]
	if at.opts.Replicas > 1 {
		if err := respreadAfterWarmUp(ctx, os.Stdout, rig, tenant, *n); err != nil {
			return err
		}
	}
	tc1, err := bench.ReadTraffic(ctx, rig.Counters, rig.JS)
	if err != nil {
		return err
	}
	fmt.Printf("2/4 pipeline: %d calls (valid, invalid JSON, schema-invalid, text-recovered; openai-chat, anthropic, ollama), no-op executor, Redis idempotency store\n", *n)
	stopProfile, err := startProfile(*cpuprofile)
	if err != nil {
		return err
	}
	c0 := rig.CPU()
	rig.Metrics.TakeLongestGaps() // only what each step saw
	full, _, err := bench.LoadAs(ctx, rig.NC, rig.JS, tenant, "bench-max-", *n, 0)
	stopProfile()
	if err != nil {
		return err
	}
	rep.StandStills = append(rep.StandStills, bench.Longest("pipeline, as fast as it goes", rig.Metrics.TakeLongestGaps()))
	tp1, err := bench.ReadTraffic(ctx, rig.Counters, rig.JS)
	if err != nil {
		return err
	}
	cpu := rig.CPU() - c0
	rep.Tail.OfferedRate = full.Rate() / 2
	if *offered > 0 {
		rep.Tail.OfferedRate = *offered
	}
	halfN := max(1, int(rep.Tail.OfferedRate*half.Seconds()))
	fmt.Printf("3/4 offered load: %.0f calls/s (half the maximum) for %v, with handler times, GC and the generator's lateness\n", rep.Tail.OfferedRate, *half)
	h0, err := bench.ReadHandlerTimes(rig.Metrics)
	if err != nil {
		return err
	}
	th0, err := bench.ReadTraffic(ctx, rig.Counters, rig.JS)
	if err != nil {
		return err
	}
	gc0 := bench.ReadGC()
	c2 := rig.CPU()
	rig.Metrics.TakeLongestGaps()
	paced, breakdown, err := bench.LoadAs(ctx, rig.NC, rig.JS, tenant, "bench-half-", halfN, rep.Tail.OfferedRate)
	if err != nil {
		return err
	}
	rep.StandStills = append(rep.StandStills, bench.Longest(fmt.Sprintf("offered load, %.0f calls/s", rep.Tail.OfferedRate), rig.Metrics.TakeLongestGaps()))
	rep.Tail.CPUPer1000 = ratio((rig.CPU()-c2).Seconds()*1000, float64(paced.Count))
	th1, err := bench.ReadTraffic(ctx, rig.Counters, rig.JS)
	if err != nil {
		return err
	}
	rep.Tail.GC = bench.ReadGC().Since(gc0)
	h1, err := bench.ReadHandlerTimes(rig.Metrics)
	if err != nil {
		return err
	}
	rep.Tail.Stages = breakdown.Rows(h1.Sub(h0))
	rep.Tail.Lateness(paced)
	full.Name, paced.Name = "pipeline, as fast as it goes", fmt.Sprintf("pipeline at %.0f calls/s", rep.Tail.OfferedRate)
	rep.Runs = []bench.RunFigures{best.Best, full.Figures(), paced.Figures()}
	rep.Pipeline = bench.Pipeline{
		PerCeiling: ratio(100*full.Rate(), best.Best.CallsPerSec), PerOneStream: ratio(100*full.Rate(), one.Best.CallsPerSec),
		LayoutPenalty: ratio(100*(best.Best.CallsPerSec-one.Best.CallsPerSec), best.Best.CallsPerSec),
		CPUPer1000:    ratio(cpu.Seconds()*1000, float64(full.Count)), PeakRSS: bench.Self().PeakRSS,
		NATSPeakRSS: rig.NATSPeakRSS(),
	}
	rep.Traffic = bench.TrafficFigures{Ceiling: best.Traffic, Pipeline: tp1.Since(tc1).Per(full.Count), Half: th1.Since(th0).Per(paced.Count)}

	if len(scenarios) > 0 {
		fmt.Printf("4/4 cost curve: %d scenarios, each as fast as it goes\n", len(scenarios))
	}
	for _, s := range scenarios {
		rig.Metrics.TakeLongestGaps()
		c, err := s.Run(ctx, rig.Target, "bench-", 0)
		if err != nil {
			return err
		}
		rep.Scenarios = append(rep.Scenarios, c)
		rep.StandStills = append(rep.StandStills, bench.Longest(c.Name, rig.Metrics.TakeLongestGaps()))
	}
	rep.Pipeline.PeakRSSLast, rep.Pipeline.NATSPeakRSSLast = bench.Self().PeakRSS, rig.NATSPeakRSS()
	if err := rig.Close(); err != nil {
		return fmt.Errorf("bench: pipeline: %w", err)
	}
	fmt.Println("gates' pure cores: testing.Benchmark in this process, pipeline stopped")
	if rep.Cores, rep.GatesPerCall, err = bench.Cores(rig.Tools); err != nil {
		return err
	}
	rep.TrustPerCall, rep.ExecutorTrust = bench.TrustTotals(rep.Cores)
	rep.Goals = bench.Goals(bench.Figures{
		PipelinePerCeiling: rep.Pipeline.PerCeiling, HalfP99Ms: float64(paced.Percentile(99)) / 1e6, CPUPer1000s: rep.Pipeline.CPUPer1000,
		PeakRSSMiB: float64(rep.Pipeline.PeakRSS) / (1 << 20), GatesPerCallUs: float64(rep.GatesPerCall) / 1e3,
		StandStillMs: float64(bench.MaxStandStill(rep.StandStills)) / 1e6, TrustPerCallUs: float64(rep.TrustPerCall) / 1e3,
		NATS: rep.NATS,
	})
	printReport(os.Stdout, rep)
	if *jsonFile != "" {
		if err := rep.Write(*jsonFile); err != nil {
			return fmt.Errorf("bench: --json: %w", err)
		}
	}
	return nil
}

func layoutNames(parts int) string {
	var names []string
	for _, l := range bench.Layouts(parts) {
		names = append(names, l.String())
	}
	return strings.Join(names, " and ")
}

func startProfile(file string) (stop func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// ratio is a/b, 0 when it is not a finite number (JSON has no NaN).
func ratio(a, b float64) float64 {
	r := a / b
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return 0
	}
	return r
}
