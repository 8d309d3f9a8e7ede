package deploy

import (
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// StreamsCmd applies the declared streams, buckets and consumers (apply),
// or shows and places the streams' leaders on a cluster (leaders).
func StreamsCmd(args []string) error {
	switch {
	case len(args) > 0 && args[0] == "apply":
		return streamsApply(args)
	case len(args) > 0 && args[0] == "leaders":
		return streamsLeaders(args)
	}
	return cmdutil.UsageError("streams: want apply or leaders")
}

// streamsApply is `toolgate streams apply`: Ensure, then on a cluster the
// streams' leaders spread over the nodes.
func streamsApply(args []string) error {
	fs := cmdutil.WithUsage(flag.NewFlagSet("streams apply", flag.ContinueOnError), "streams", "apply")
	url := cmdutil.NATSFlag(fs)
	defReplicas, err := strconv.Atoi(cmdutil.Env("TOOLGATE_STREAM_REPLICAS", "1"))
	if err != nil {
		return fmt.Errorf("streams: TOOLGATE_STREAM_REPLICAS: want a number of replicas (1 or 3): %w", err)
	}
	replicas := fs.Int("replicas", defReplicas, "stream and bucket replicas, 3 on a production cluster (TOOLGATE_STREAM_REPLICAS)")
	lanes := fs.Int("lanes", cmdutil.EnvInt("TOOLGATE_LANES", streams.DefaultLanes), "fairness lanes per laned stage, a durable each for interactive and batch calls; every stage must be given the same (TOOLGATE_LANES)")
	parts := fs.Int("partitions", cmdutil.EnvInt("TOOLGATE_PARTITIONS", streams.DefaultPartitions), "partitions of the gate stages' streams; raising P creates partitions' streams, lowering it leaves the streams beyond P to drain (TOOLGATE_PARTITIONS; every stage must be given the same)")
	spread := fs.Bool("spread-leaders", true, "on a cluster, move the streams' leaders over the nodes as toolgate streams leaders --spread does (each gate stage's partitions led by different nodes, then the other streams and buckets); nothing on one server")
	prune := fs.Bool("prune", false, "also delete the partition streams beyond --partitions that are empty (once every process runs with the lowered P); one that still holds hops is kept to drain and named")
	ops, err := cmdutil.ParseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return cmdutil.UsageError("streams apply takes no operands (got %q)", ops[0])
	}
	nc, js, err := cmdutil.Connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := cmdutil.Timeout()
	defer cancel()
	s := streams.DefaultSettings()
	s.Replicas = *replicas
	if *lanes < 1 || *lanes > streams.MaxLanes {
		return cmdutil.UsageError("streams apply: --lanes %d: want 1 to %d", *lanes, streams.MaxLanes)
	}
	s.Fair.Lanes = *lanes
	if *parts < 1 || *parts > streams.MaxPartitions {
		return cmdutil.UsageError("streams apply: --partitions %d: want 1 to %d", *parts, streams.MaxPartitions)
	}
	s.Fair.Partitions = *parts
	s.Fair.Tenants = stage.SplitList(cmdutil.Env("TOOLGATE_TENANTS", "")) // accumulate's lanes filter on the listed tenants' subjects
	if err := streams.Ensure(ctx, js, s); err != nil {
		return err
	}
	fmt.Println("streams, buckets and consumers applied")
	if *spread {
		if err := spreadLeaders(ctx, js, false); err != nil {
			return err
		}
	}
	if *prune {
		deleted, kept, err := streams.Prune(ctx, js, s)
		for _, name := range deleted {
			fmt.Println("pruned empty partition stream", name)
		}
		for _, name := range kept {
			fmt.Println("kept partition stream", name, "beyond --partitions: it still holds hops, which its durables drain; prune again later")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Probe exits 0 when URL answers 200: the container healthcheck, since the
// runtime image has no shell or curl.
func Probe(args []string) error {
	fs := cmdutil.WithUsage(flag.NewFlagSet("probe", flag.ContinueOnError), "probe", "")
	wait := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) != 1 {
		return cmdutil.UsageError("probe: want one URL, e.g. toolgate probe http://127.0.0.1:8080/readyz")
	}
	c := http.Client{Timeout: *wait}
	resp, err := c.Get(ops[0])
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("probe: %s answered %s", ops[0], resp.Status)
	}
	return nil
}
