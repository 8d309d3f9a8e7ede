// Package chaos runs toolgate as it runs in production — each stage its own
// OS process, one NATS server, one redis-server — while it kills stage
// processes and restarts NATS and Redis, and then checks from the results
// stream, the dead letters and the executor's own counts that no accepted
// call was lost or executed twice and that each has exactly one outcome.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

// Config sizes a chaos run.
type Config struct {
	Calls     int           // responses offered, one call each (default 5,000)
	Rate      float64       // responses per second (default 100)
	KillEvery time.Duration // a random stage process is SIGKILLed this often (default 2s)
	// NATSRestartAt and RedisRestartAt are when, as a fraction of the load's
	// duration, the NATS server and redis-server are restarted (defaults
	// 0.4 and 0.65).
	NATSRestartAt, RedisRestartAt float64
	AckWait                       time.Duration     // every consumer's AckWait and the claim grace (default 5s)
	Settle                        time.Duration     // bound on the wait for every outcome after the load (default 3m)
	ReplayWait                    time.Duration     // bound on the wait for replayed dead letters' outcomes (default 2m)
	ExecDelay                     time.Duration     // how long the executor takes per call (default 100ms)
	Dir                           string            // work directory (stores, logs, binaries); required
	Bins                          map[string]string // prebuilt stage binaries; nil: Build into Dir
	Seed                          uint64            // kill order; 0: from the clock
	Log                           io.Writer         // progress lines; nil: none
	// Topology is TopologySingle (the default: one NATS server, one
	// redis-server) or TopologyCluster (cluster.go).
	Topology string
	// NATSServer is the nats-server binary of the cluster topology; empty:
	// Bins["nats-server"], else built into Dir.
	NATSServer string
	// ExecutorDown is how long the cluster topology stops the tool's
	// executor under load (cluster_execdown.go); 0: 30s, negative: never.
	ExecutorDown time.Duration
	// Soak, when positive, runs load at Rate for that long with no faults
	// and judges the RSS slope of every stage process (Calls is then
	// Rate × Soak).
	Soak time.Duration
	// RSSEvery is how often the RSS of every process is sampled (default
	// 5s); RSSWarmup how far into the load its baseline is taken (default
	// 30s, at most a quarter of the load); RSSAfter how long after the
	// load the last sample is taken (default 60s; the run waits for it).
	RSSEvery, RSSWarmup, RSSAfter time.Duration
	// Partitions is P of the cluster topology's gate streams (0 or 1:
	// none; streams.Fair.Partitions): every stage process runs with it.
	Partitions int
}

func (c *Config) setDefaults() {
	if c.Soak > 0 {
		if c.Rate == 0 {
			c.Rate = 100
		}
		c.Calls = max(1, int(c.Soak.Seconds()*c.Rate))
	}
	if c.Calls == 0 {
		c.Calls = 5000
	}
	if c.Rate == 0 {
		c.Rate = 100
	}
	if c.KillEvery == 0 {
		c.KillEvery = 2 * time.Second
	}
	if c.NATSRestartAt == 0 {
		c.NATSRestartAt = 0.4
	}
	if c.RedisRestartAt == 0 {
		c.RedisRestartAt = 0.65
	}
	if c.AckWait == 0 {
		c.AckWait = 5 * time.Second
	}
	if c.ExecDelay == 0 {
		c.ExecDelay = 100 * time.Millisecond
	}
	if c.Settle == 0 {
		c.Settle = 3 * time.Minute
	}
	if c.ReplayWait == 0 {
		c.ReplayWait = 2 * time.Minute
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.ExecutorDown == 0 {
		c.ExecutorDown = 30 * time.Second
	}
	if c.RSSEvery == 0 {
		c.RSSEvery = 5 * time.Second
	}
	if c.RSSWarmup == 0 {
		c.RSSWarmup = min(30*time.Second, time.Duration(float64(c.Calls)/c.Rate*float64(time.Second))/4)
	}
	if c.RSSAfter == 0 {
		c.RSSAfter = time.Minute
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// Report is what a run did and what it found.
type Report struct {
	Offered, Accepted, Refused int
	Load, Settle, Total        time.Duration
	Kills                      map[string]int // stage -> SIGKILLs
	NATSRestarts, RedisRestart int
	UnexpectedExits            int // stage exits the harness did not cause (e.g. started while NATS was down)
	StatusQueries              int
	Verdict
	Replay     ReplayCheck
	Accounting Accounting // every run explained (account.go)
	Topology   string
	Faults     []Fault   // the cluster topology's faults and their timings (cluster_havoc.go)
	ExecDown   *ExecDown // the executor-down fault's waits; nil when there was none
	// PartitionHops are the hops each partition stream beyond partition 0
	// stored over the cluster run (its last sequence), Config.Partitions > 1.
	PartitionHops map[string]uint64
	Soak          time.Duration
	RSS           []RSSFigure // every process sampled (rss_sampler.go)
	RSSEvery      time.Duration
	RSSWarmup     time.Duration
	// RSSViolations are the stage processes whose RSS kept growing in a
	// soak.
	RSSViolations []string
}

// OK reports whether no violation was found.
func (r Report) OK() bool {
	return len(r.Violations) == 0 && len(r.Replay.Violations) == 0 && len(r.Accounting.Violations) == 0 && len(r.RSSViolations) == 0
}

// KillCount is the total of SIGKILLs.
func (r Report) KillCount() int {
	n := 0
	for _, k := range r.Kills {
		n += k
	}
	return n
}

// Run starts NATS, redis-server and the seven stage processes in cfg.Dir,
// pushes cfg.Calls responses while it kills and restarts, waits for every
// outcome, checks, and replays every dead letter. An error means the run
// could not be carried out; violations are in the Report.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg.setDefaults()
	if cfg.Topology == TopologyCluster {
		return runCluster(ctx, cfg)
	}
	rep := Report{Offered: cfg.Calls, Kills: map[string]int{}, Topology: TopologySingle}
	begin, logf, err := prepare(&cfg)
	if err != nil {
		return rep, err
	}
	ns, err := testenv.StartNATS(testenv.NATSOptions{StoreDir: filepath.Join(cfg.Dir, "jetstream"), Partitions: cfg.Partitions})
	if err != nil {
		return rep, err
	}
	defer ns.Shutdown()
	rs, err := testenv.StartRedis(testenv.RedisOptions{
		Dir: filepath.Join(cfg.Dir, "redis"), Durable: true, LogFile: filepath.Join(cfg.Dir, "redis.log"),
	})
	if err != nil {
		return rep, err
	}
	defer rs.Stop()
	nc, err := nats.Connect(ns.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond), nats.Name("toolgate chaos"))
	if err != nil {
		return rep, fmt.Errorf("chaos: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return rep, fmt.Errorf("chaos: %w", err)
	}
	settings := streams.DefaultSettings()
	settings.AckWait = cfg.AckWait
	if err := setup(ctx, js, settings); err != nil {
		return rep, err
	}
	exe, err := NewExecutor(nc, cfg.ExecDelay)
	if err != nil {
		return rep, err
	}
	defer exe.Close()
	procs, err := startStages(cfg, ns.URL(), rs.URL())
	defer func() {
		for _, p := range procs {
			p.stop(10 * time.Second)
		}
	}()
	if err != nil {
		return rep, err
	}
	logf("7 stage processes consuming; NATS %s, redis %s, AckWait %v", ns.URL(), rs.URL(), cfg.AckWait)

	acc := &accepted{kind: map[string]string{}}
	prefix := "chaos" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36) + "-"
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		produce(loadCtx, js, prefix, cfg.Calls, cfg.Rate, time.Minute, acc)
	}()
	mem := startRSS(cfg.RSSEvery, stageTargets(procs))
	mem.markLoadStart()
	loadStart := time.Now()
	if cfg.Soak > 0 {
		err = soak(ctx, cfg, produced, logf)
	} else {
		err = havoc(ctx, cfg, procs, exe, ns, rs, produced, &rep, logf)
	}
	if err != nil {
		return rep, err
	}
	mem.markLoadEnd()
	rep.Load = time.Since(loadStart)
	if cfg.Soak > 0 {
		concludeRSS(cfg, mem, &rep, logf)
	}
	if err := conclude(ctx, cfg, js, acc, exe, procs, &rep, logf); err != nil {
		return rep, err
	}
	if cfg.Soak <= 0 {
		concludeRSS(cfg, mem, &rep, logf)
	}
	rep.Total = time.Since(begin)
	return rep, nil
}

// conclude waits for every outcome of the accepted calls, judges them,
// accounts for every run and replays every dead letter.
func conclude(ctx context.Context, cfg Config, js jetstream.JetStream, acc *accepted, exe *Executor, procs []*proc, rep *Report, logf func(string, ...any)) error {
	ids := acc.ids()
	rep.Accepted, rep.Refused = len(ids), acc.refuse
	logf("load done: %d accepted, %d refused", rep.Accepted, rep.Refused)

	settleStart := time.Now()
	if err := settle(ctx, js, ids, cfg.Settle, logf); err != nil {
		logf("settle: %v", err)
	}
	rep.Settle = time.Since(settleStart)
	// A cluster's passing errors (no responders while a consumer moves, a
	// missed heartbeat) end one read, not the run: read again.
	var results []result
	err := testenv.Poll(2*time.Minute, time.Second, func() error {
		var err error
		results, _, err = readResults(ctx, js, nil)
		return err
	})
	if err != nil {
		return err
	}
	letters, err := listLetters(ctx, js)
	if err != nil {
		return err
	}
	runs := exe.Runs()
	if rep.ExecDown != nil {
		rep.ExecDown.measure(results, letters, acc.times(), exe.FirstRuns())
	}
	rep.Verdict = judge(ids, results, runs, letters)
	if len(ids) > 1 && rep.Claimed == 0 { // half the load went on ChaosTenant's claimed and batch subjects (ingestSubject)
		rep.violate("path: no result of a call of tenant %s: the responses published on its claimed and batch subjects never became its calls", ChaosTenant)
	}
	rep.Accounting = account(ids, results, runs, letters)
	rep.StatusQueries = exe.Queries()
	for _, p := range procs {
		_, exits := p.counts()
		rep.UnexpectedExits += exits
	}
	logf("checked %d results: %d duplicates, %d lost, %d executed twice", len(results), rep.Duplicates, rep.Lost, rep.ExecutedTwice)
	rep.Replay, err = replayAll(ctx, js, letters, exe, cfg.ReplayWait, logf)
	return err
}

// setup applies the topology (with the run's AckWait) and the tools.
func setup(ctx context.Context, js jetstream.JetStream, settings streams.Settings) error {
	if err := streams.Ensure(ctx, js, settings); err != nil {
		return err
	}
	defs, err := tool.Load("chaos-tools.yaml", []byte(toolsYAML()))
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	if _, err := registry.Apply(ctx, kv, "chaos-tools.yaml", defs, false); err != nil {
		return err
	}
	return nil
}

// startStages starts one process per stage and waits until each consumes.
func startStages(cfg Config, natsURL, redisURL string) ([]*proc, error) {
	return startStageSet(cfg, natsURL, redisURL, nil, nil)
}

// startStageSet starts replicas[stage] processes of each stage (one when
// absent), each with env added to its environment, and waits until each
// consumes.
func startStageSet(cfg Config, natsURL, redisURL string, replicas map[string]int, env []string) ([]*proc, error) {
	// Separate processes: they share gate seal keys written once (and kept
	// across the kills), each stage reading its own, execute all of them.
	sealDir := filepath.Join(cfg.Dir, "seal-keys")
	if _, err := seal.Ensure(sealDir, streams.Names()); err != nil {
		return nil, err
	}
	var procs []*proc
	for _, st := range streams.Names() {
		n := max(replicas[st], 1)
		for i := range n {
			port, err := testenv.Port()
			if err != nil {
				return procs, err
			}
			name := st
			if n > 1 {
				name = st + "-" + strconv.Itoa(i)
			}
			p := &proc{stage: st, bin: cfg.Bins[st], http: "127.0.0.1:" + strconv.Itoa(port), log: filepath.Join(cfg.Dir, name+".log")}
			p.env = append([]string{
				"TOOLGATE_NATS_URL=" + natsURL, "TOOLGATE_REDIS_URL=" + redisURL, httpAddrEnv + p.http,
				"TOOLGATE_LOG_LEVEL=warn", "TOOLGATE_ACK_WAIT=" + cfg.AckWait.String(), "TOOLGATE_SEAL_KEYS=" + sealDir,
			}, env...)
			if err := p.start(); err != nil {
				return procs, err
			}
			procs = append(procs, p)
		}
	}
	for _, p := range procs {
		if err := p.ready(60 * time.Second); err != nil {
			return procs, fmt.Errorf("chaos: stage not ready (log %s): %w", p.log, err)
		}
	}
	return procs, nil
}

// havoc kills a random stage process every cfg.KillEvery (±25 %) while the
// load runs — the execute process while the executor holds a call, so its
// claim must be reconciled — and restarts NATS and redis-server once each.
func havoc(ctx context.Context, cfg Config, procs []*proc, exe *Executor, ns *testenv.NATS, rs *testenv.Redis, produced <-chan struct{}, rep *Report, logf func(string, ...any)) error {
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed>>1|1))
	loadTime := time.Duration(float64(cfg.Calls) / cfg.Rate * float64(time.Second))
	start := time.Now()
	natsAt := start.Add(time.Duration(cfg.NATSRestartAt * float64(loadTime)))
	redisAt := start.Add(time.Duration(cfg.RedisRestartAt * float64(loadTime)))
	nextKill := start.Add(cfg.KillEvery)
	// Kills draw stages from a shuffled bag, so every stage is killed once
	// in each round of seven; the first round starts with execute.
	bag := rng.Perm(len(procs))
	for i, j := range bag {
		if procs[j].stage == streams.Execute {
			bag[0], bag[i] = bag[i], bag[0]
		}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-produced:
			if rep.NATSRestarts == 0 || rep.RedisRestart == 0 {
				logf("warning: the load ended before every restart (NATS %d, redis %d)", rep.NATSRestarts, rep.RedisRestart)
			}
			return nil
		case now := <-tick.C:
			switch {
			case rep.NATSRestarts == 0 && now.After(natsAt):
				t0 := time.Now()
				if err := ns.Restart(); err != nil {
					return err
				}
				rep.NATSRestarts++
				logf("restarted NATS (down %v)", time.Since(t0).Round(time.Millisecond))
			case rep.RedisRestart == 0 && now.After(redisAt):
				t0 := time.Now()
				if err := rs.Restart(); err != nil {
					return err
				}
				rep.RedisRestart++
				logf("restarted redis-server with SIGKILL (down %v)", time.Since(t0).Round(time.Millisecond))
			case now.After(nextKill):
				if len(bag) == 0 {
					bag = rng.Perm(len(procs))
				}
				p := procs[bag[0]]
				bag = bag[1:]
				if p.stage == streams.Execute {
					// Catch it mid-call: the tool has the request, toolgate
					// will never hear the answer.
					_ = testenv.Poll(time.Second, 5*time.Millisecond, func() error {
						if exe.InFlight() == 0 {
							return errors.New("no call in flight")
						}
						return nil
					})
				}
				if p.kill() {
					rep.Kills[p.stage]++
					logf("SIGKILL %s", p.stage)
				}
				jitter := time.Duration(rng.Int64N(int64(cfg.KillEvery)/2)) - cfg.KillEvery/4
				nextKill = now.Add(cfg.KillEvery + jitter)
			}
		}
	}
}

// prepare checks cfg, returns when the run began and its logger (seconds
// since then on every line), and builds the binaries cfg does not name:
// what both topologies do first.
func prepare(cfg *Config) (time.Time, func(format string, args ...any), error) {
	if cfg.Dir == "" {
		return time.Time{}, nil, errors.New("chaos: Config.Dir is required")
	}
	begin := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(cfg.Log, "chaos %6.1fs  %s\n", time.Since(begin).Seconds(), fmt.Sprintf(format, args...))
	}
	if cfg.Bins == nil {
		bins, err := Build(filepath.Join(cfg.Dir, "bin"))
		if err != nil {
			return begin, nil, err
		}
		cfg.Bins = bins
		logf("built %d stage binaries", len(bins))
	}
	return begin, logf, nil
}
