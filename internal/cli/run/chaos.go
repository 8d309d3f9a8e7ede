package run

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/chaos"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/streams"
)

// ChaosCmd runs every stage as its own process against one NATS server and
// one redis-server, pushes calls while it kills stages and restarts NATS and
// Redis, and checks that no accepted call was lost or executed twice.
func ChaosCmd(args []string) error {
	fs := cmdutil.WithUsage(flag.NewFlagSet("chaos", flag.ContinueOnError), "chaos", "")
	n := fs.Int("n", 5000, "calls pushed (one response each, the benchmark's mix)")
	rate := fs.Float64("rate", 100, "calls offered per second")
	every := fs.Duration("kill-every", 2*time.Second, "SIGKILL a random stage process this often")
	ackWait := fs.Duration("ack-wait", 5*time.Second, "every consumer's AckWait (and the claim grace): how soon a killed process's work is redelivered")
	settle := fs.Duration("settle", 3*time.Minute, "bound on the wait for every outcome after the load")
	seed := fs.Uint64("seed", 0, "kill order; 0: from the clock")
	topology := fs.String("topology", chaos.TopologySingle, "single (one NATS server, one redis-server) or cluster (three nats-server processes with R3 streams, Redis with a replica and three sentinels, two replicas of accumulate and execute; the stream leader's node, the Redis primary and every stage killed, a NATS node paused, a stage restarted onto a backlog)")
	binDir := fs.String("bin", "", "directory of prebuilt stage binaries (make chaos builds them into bin/), and for --topology cluster its nats-server; empty: go build them at run time")
	natsServer := fs.String("nats-server", "", "--topology cluster: the nats-server binary (the version toolgate embeds); empty: --bin's, else built from the module")
	execDown := fs.Duration("executor-down", 30*time.Second, "--topology cluster: stop the tool's executor this long under load (keep it under execute's ~92 s retry budget, or calls are dead-lettered and counted); 0: never")
	parts := fs.Int("partitions", 1, "--topology cluster: partitions of the gate stages' streams (P, as the stages' --partitions; not set: 3 with --topology cluster, a partition led by each node): each stage's partitions get leaders of their own, so the leader killed is one of several")
	soak := fs.Duration("soak", 0, "run load at --rate for this long with no faults and report every stage process's RSS slope (MiB/min), failing on one that keeps growing; --n is ignored")
	rssEvery := fs.Duration("rss-every", 5*time.Second, "how often every process's RSS is sampled")
	rssAfter := fs.Duration("rss-after", time.Minute, "when after the load the last RSS sample is taken (the run waits for it); --hostile: how long valid load goes on after the attack settled, RSS at its end judged against its baseline (0: no after phase)")
	keep := fs.Bool("keep", false, "keep the work directory (stores and each stage's log)")
	hostile := fs.Bool("hostile", false, "the hostile soak instead: toolgate up under a memory cap, valid calls at --rate for --duration, then again while issue 13's hostile inputs are published")
	duration := fs.Duration("duration", 10*time.Second, "--hostile: valid load per phase (baseline, attack)")
	memCap := fs.String("mem-cap", "4GiB", "--hostile: the address-space cap of toolgate up (RLIMIT_AS), e.g. 4GiB, 512MiB")
	inputs := fs.String("inputs", "", "--hostile: comma-separated hostile inputs to publish; empty: all ("+strings.Join(chaos.HostileInputs(), ", ")+")")
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return cmdutil.UsageError("chaos takes no operands (got %q)", ops[0])
	}
	set := map[string]bool{} // the flags given on the command line
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *hostile {
		cfg := chaos.HostileConfig{Duration: *duration}
		if set["rate"] {
			cfg.Rate = *rate
		}
		if set["settle"] {
			cfg.Settle = *settle
		}
		if set["rss-after"] {
			cfg.After = *rssAfter
			if cfg.After <= 0 {
				cfg.After = -1 // HostileConfig: 0 is the default minute
			}
		}
		return hostileCmd(cfg, *memCap, *inputs, *keep)
	}

	if *topology != chaos.TopologySingle && *topology != chaos.TopologyCluster {
		return cmdutil.UsageError("chaos --topology %q: want %s or %s", *topology, chaos.TopologySingle, chaos.TopologyCluster)
	}
	*parts = chaosPartitions(set["partitions"], *topology, *parts)
	if *parts < 1 || *parts > streams.MaxPartitions || (*parts > 1 && *topology != chaos.TopologyCluster) {
		return cmdutil.UsageError("chaos --partitions %d: want 1 to %d, more than 1 with --topology %s only", *parts, streams.MaxPartitions, chaos.TopologyCluster)
	}
	if *execDown <= 0 {
		*execDown = -1 // Config: negative is never
	}
	if *soak < 0 || *rssEvery <= 0 || *rssAfter < 0 {
		return cmdutil.UsageError("chaos: --soak and --rss-after must not be negative, --rss-every must be positive")
	}
	if *rssAfter == 0 {
		*rssAfter = time.Nanosecond // Config: 0 is the default minute
	}
	var bins map[string]string
	if *binDir != "" {
		if bins, err = chaos.LoadBins(*binDir); err != nil {
			return err
		}
	}
	dir, err := os.MkdirTemp("", "toolgate-chaos-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintln(os.Stderr, "chaos: work directory", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := chaos.Run(ctx, chaos.Config{
		Calls: *n, Rate: *rate, KillEvery: *every, AckWait: *ackWait, Settle: *settle, Seed: *seed, Dir: dir, Log: os.Stderr,
		Topology: *topology, Bins: bins, NATSServer: *natsServer,
		ExecutorDown: *execDown, Partitions: *parts, Soak: *soak, RSSEvery: *rssEvery, RSSAfter: *rssAfter,
	})
	if err != nil {
		return err
	}
	rep.Print(os.Stdout)
	if !rep.OK() {
		return errors.New("chaos: violations found (run again with --keep to read each stage's log)")
	}
	return nil
}

// clusterPartitions is chaos --topology cluster's P when --partitions is
// not given: one partition per node, so every node leads one partition of
// each gate stage and a killed leader is always one of three (issue 37:
// the cluster chaos run runs with P > 1).
const clusterPartitions = 3

// chaosPartitions is the run's P: parts when --partitions was given, else
// clusterPartitions for the cluster topology and 1 for one server.
func chaosPartitions(given bool, topology string, parts int) int {
	if given || topology != chaos.TopologyCluster {
		return parts
	}
	return clusterPartitions
}
