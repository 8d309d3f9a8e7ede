package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/natsproc"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// The topologies a run can take.
const (
	TopologySingle  = "single"  // one embedded NATS server, one redis-server
	TopologyCluster = "cluster" // three nats-server processes, Redis with Sentinel
)

// clusterReplicas are the stage processes of the cluster topology: two of
// accumulate and execute (the stages that hold state across a call), one of
// the others.
func clusterReplicas() map[string]int {
	return map[string]int{streams.Accumulate: 2, streams.Execute: 2}
}

// runCluster is Run on the deployment people scale to: three nats-server
// processes with R3 streams and buckets, a Redis primary with one replica
// and three sentinels, every stage its own process (two of accumulate and
// execute), and the faults of clusterHavoc.
func runCluster(ctx context.Context, cfg Config) (Report, error) {
	rep := Report{Offered: cfg.Calls, Kills: map[string]int{}, Topology: TopologyCluster}
	begin, logf, err := prepare(&cfg)
	if err != nil {
		return rep, err
	}
	bin := cfg.NATSServer
	if bin == "" {
		bin = cfg.Bins[NATSServerBin]
	}
	if bin == "" {
		var err error
		if bin, err = natsproc.Build(filepath.Join(cfg.Dir, "bin")); err != nil {
			return rep, err
		}
		logf("built nats-server")
	}
	nc3, err := natsproc.StartCluster(bin, filepath.Join(cfg.Dir, "nats"), cfg.Partitions)
	if nc3 != nil {
		defer nc3.Stop(10 * time.Second)
	}
	if err != nil {
		return rep, err
	}
	rdir := filepath.Join(cfg.Dir, "redis")
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		return rep, fmt.Errorf("chaos: %w", err)
	}
	ss, err := startSentinelSet(rdir, time.Second)
	if ss != nil {
		defer ss.stop()
	}
	if err != nil {
		return rep, err
	}
	nc, err := nats.Connect(nc3.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond), nats.Name("toolgate chaos"))
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
	settings.Replicas = 3
	settings.Fair.Partitions = cfg.Partitions
	// The meta leader is elected after the nodes meet: until then Ensure
	// fails, and is tried again.
	err = testenv.Poll(60*time.Second, 250*time.Millisecond, func() error {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return setup(sctx, js, settings)
	})
	if err != nil {
		return rep, fmt.Errorf("chaos: R3 streams on the cluster: %w", err)
	}
	if err := spreadLeaders(ctx, js, logf); err != nil {
		return rep, err
	}
	exe, err := NewExecutor(nc, cfg.ExecDelay)
	if err != nil {
		return rep, err
	}
	defer exe.Close()
	procs, err := startStageSet(cfg, nc3.URLs(), ss.URL(), clusterReplicas(), []string{"TOOLGATE_STREAM_REPLICAS=3", "TOOLGATE_PARTITIONS=" + strconv.Itoa(settings.Fair.PartitionCount())})
	defer func() {
		for _, p := range procs {
			p.stop(10 * time.Second)
		}
	}()
	if err != nil {
		return rep, err
	}
	logf("%d stage processes consuming; NATS %s (R3, %d partitions), redis %s, AckWait %v", len(procs), nc3.URLs(), settings.Fair.PartitionCount(), ss.URL(), cfg.AckWait)

	acc := &accepted{kind: map[string]string{}}
	prefix := "chaos" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36) + "-"
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	produced, faulted := make(chan struct{}), make(chan struct{})
	held := faulted
	if cfg.Soak > 0 {
		held = nil // no faults to wait for
	}
	go func() {
		defer close(produced)
		produceHeld(loadCtx, js, prefix, cfg.Calls, cfg.Rate, time.Minute, acc, held)
	}()
	mem := startRSS(cfg.RSSEvery, append(stageTargets(procs), clusterRSSTargets(nc3)...))
	mem.markLoadStart()
	loadStart := time.Now()
	h := &clusterHavoc{cfg: cfg, procs: procs, exe: exe, nats: nc3, redis: ss, js: js, rep: &rep, logf: logf, start: loadStart, acc: acc, faulted: faulted}
	if cfg.Soak > 0 {
		err = soak(ctx, cfg, produced, logf)
	} else {
		err = h.run(ctx, produced)
	}
	if err != nil {
		return rep, err
	}
	mem.markLoadEnd()
	rep.Load = time.Since(loadStart)
	// The judge and the replay need every node current again.
	if err := nc3.WaitHealthy(2 * time.Minute); err != nil {
		logf("warning: the NATS cluster is not healthy after the faults: %v", err)
	}
	if cfg.Soak > 0 {
		concludeRSS(cfg, mem, &rep, logf)
	}
	if err := conclude(ctx, cfg, js, acc, exe, procs, &rep, logf); err != nil {
		return rep, err
	}
	h.timeFirstRuns()
	rep.PartitionHops = partitionHops(ctx, js)
	if cfg.Soak <= 0 {
		concludeRSS(cfg, mem, &rep, logf)
	}
	rep.Total = time.Since(begin)
	return rep, nil
}

// partitionHops is how many hops each partition stream beyond partition 0
// stored (its last sequence: a work queue keeps none it delivered), and
// how many claimed responses and claims each of TOOLGATE_RESPONSES'
// partition streams did, and stream events and batch responses each of
// TOOLGATE_IN's.
func partitionHops(ctx context.Context, js jetstream.JetStream) map[string]uint64 {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	names, err := streams.AllPartitionStreams(ctx, js)
	if err != nil {
		return nil
	}
	if ingest, err := streams.IngestPartitionNames(ctx, js); err == nil { // and TOOLGATE_IN's
		names = append(names, ingest...)
	}
	out := map[string]uint64{}
	for _, name := range names {
		if st, err := js.Stream(ctx, name); err == nil {
			out[name] = st.CachedInfo().State.LastSeq
		}
	}
	return out
}
