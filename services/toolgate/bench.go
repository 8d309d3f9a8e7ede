package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// benchCmd measures, in one run on one machine: the ceiling of seven chained
// JetStream hops, the full pipeline under maximum load, and latency at half
// the measured maximum rate.
func benchCmd(args []string) error {
	fs := withUsage(flag.NewFlagSet("bench", flag.ContinueOnError), "bench", "")
	n := fs.Int("n", 20000, "calls pushed through the pipeline (and messages through the ceiling)")
	size := fs.Int("size", 1024, "ceiling message size in bytes (about a provider response)")
	half := fs.Duration("half", 10*time.Second, "how long to offer half the maximum rate")
	redisURL := fs.String("redis", env("TOOLGATE_REDIS_URL", ""), "Redis for idempotency keys; empty: start a redis-server")
	tools := fs.String("tools", "examples/tools.yaml", "tool definitions")
	offered := fs.Float64("rate", 0, "offered load of step 3 in calls/s; 0: half the measured maximum")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the pipeline run to this file")
	ops, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return usageError("bench takes no operands (got %q)", ops[0])
	}

	dir, err := os.MkdirTemp("", "toolgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ns, err := testenv.StartNATS(testenv.NATSOptions{StoreDir: filepath.Join(dir, "js")})
	if err != nil {
		return fmt.Errorf("bench: embedded NATS: %w", err)
	}
	defer ns.Shutdown()
	var redisPID int
	if *redisURL == "" {
		rs, err := testenv.StartRedis(testenv.RedisOptions{Dir: dir})
		if err != nil {
			return fmt.Errorf("bench: %w (or set --redis)", err)
		}
		defer rs.Stop()
		*redisURL, redisPID = rs.URL(), rs.PID()
	}
	if err := applyFile(ns.URL(), *tools); err != nil {
		return err
	}
	nc, _, err := connect(ns.URL())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		return err
	}
	signer, err := execute.GenerateSigner() // the pipeline signs, the tool verifies, as in production
	if err != nil {
		return err
	}
	ts, err := toolserver.New(nc, "bench-noop", "1.0.0", toolserver.PublicKey(signer.Public()...))
	if err != nil {
		return err
	}
	for _, t := range []string{"create_invoice", "get_weather"} {
		if err := ts.Handle(t, func(context.Context, toolserver.Call) (any, error) { return map[string]bool{"ok": true}, nil }); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	runErr := make(chan error, 1)
	go func() {
		runErr <- stage.Run(ctx, stage.Config{NATSURL: ns.URL(), RedisURL: *redisURL, Stages: streams.Names(), Log: zerolog.Nop(), Exec: stage.ExecConfig{Signer: signer}}, ready)
	}()
	select {
	case <-ready:
	case err := <-runErr:
		return fmt.Errorf("bench: pipeline: %v", err)
	}

	fmt.Printf("machine: %s\n", bench.Machine())
	fmt.Printf("1/3 ceiling: %d messages of %d B through %d chained JetStream hops (file storage, fetch batch 100, async publish)\n", *n, *size, bench.Hops)
	ceil, err := bench.Ceiling(ctx, nc, js, *n, *size, jetstream.FileStorage)
	if err != nil {
		return err
	}
	fmt.Printf("2/3 pipeline: %d calls (valid, invalid JSON, schema-invalid, text-recovered; openai-chat, anthropic, ollama), no-op executor, Redis idempotency store\n", *n)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	u0, r0 := bench.Self(), bench.ProcCPU(redisPID)
	full, err := bench.Load(ctx, nc, js, "bench-max-", *n, 0)
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	u1, r1 := bench.Self(), bench.ProcCPU(redisPID)
	cpu := (u1.CPU - u0.CPU) + (r1 - r0)
	halfRate := full.Rate() / 2
	if *offered > 0 {
		halfRate = *offered
	}
	halfN := int(halfRate * half.Seconds())
	fmt.Printf("3/3 offered load: %.0f calls/s (half the maximum) for %v\n", halfRate, *half)
	paced, breakdown, err := bench.LoadWithBreakdown(ctx, nc, js, "bench-half-", halfN, halfRate)
	if err != nil {
		return err
	}
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
	}
	fmt.Println()
	fmt.Println("| run | calls | calls/s | p50 | p95 | p99 |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, s := range []bench.Stats{ceil, full, paced} {
		fmt.Printf("| %s | %d | %.0f | %s | %s | %s |\n", s.Name, s.Count, s.Rate(), ms(s.Percentile(50)), ms(s.Percentile(95)), ms(s.Percentile(99)))
	}
	fmt.Println()
	fmt.Printf("time added per stage at the offered load (from each call's history):\n%s\n", breakdown)
	fmt.Printf("pipeline / ceiling: %.0f %%\n", 100*full.Rate()/ceil.Rate())
	fmt.Printf("CPU per 1,000 calls: %.2f s (this process, embedded NATS included, plus redis-server)\n", cpu.Seconds()*1000/float64(full.Count))
	fmt.Printf("peak memory (RSS of this process): %.0f MiB\n", float64(u1.PeakRSS)/(1<<20))
	cancel()
	<-runErr
	return nil
}
