package run

import (
	"context"
	"math"
	"testing"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/benchrig"
	"github.com/toolgate/toolgate/streams"
)

// bench --nats cluster: three nats-server processes, every stream and
// bucket R3, the pipeline run with P = 2 to completion (each call one
// result); the counters read from each node's monitoring port and summed:
// each node stored every message the client stored (R3 on three nodes),
// the cluster's total is three times the client's, the routes carried more
// messages than the clients did, every stream that stored has a leader
// among the nodes (the gate streams' where streams.SpreadLeaders placed
// them), and the nodes' shares of the hops they lead add up to
// the whole.
func TestBenchCluster_runs_the_pipeline_R3_on_three_nodes_and_sums_each_nodes_counters(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	at, err := openBenchNATS(ctx, natsCluster, "", "", dir, 2) // the servers map the claimed subjects to the rig's two partitions
	if err != nil {
		t.Fatal(err)
	}
	defer at.close()
	rig, err := benchrig.Start(at.withRig(benchrig.Options{Dir: dir, ToolsFile: "../../../examples/tools.yaml", Fair: streams.Fair{Partitions: 2}}))
	if err != nil {
		t.Fatal(err)
	}
	defer rig.Close()

	// The gate streams' leaders placed as `streams apply` places them.
	if g := 1 + 2*len(streams.PartitionedStages()) + 2 + 2 + 2; len(rig.Leaders) <= g || rig.Leaders[g].Stream != streams.StreamIn ||
		rig.Leaders[g-1].Stream != streams.ResponsesStream(1) || rig.Leaders[g-3].Stream != "KV_"+streams.ExecReplayBucket(1) || rig.Leaders[g-5].Stream != streams.ResultsStream(1) {
		t.Errorf("leaders placed: %v, want TOOLGATE_GATES, each stage's two partitions, the two results streams, the executors' two replay buckets, TOOLGATE_RESPONSES' two partitions, then TOOLGATE_IN and the others", rig.Leaders)
	}
	for _, m := range rig.Leaders {
		if m.Err != "" || m.After != m.Want {
			t.Errorf("leader not placed: %s", m)
		}
	}

	list := rig.JS.ListStreams(ctx)
	count := 0
	for info := range list.Info() {
		count++
		if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
			t.Errorf("%s: %d replicas (cluster %+v), want R3", info.Config.Name, info.Config.Replicas, info.Cluster)
		}
	}
	if err := list.Err(); err != nil || count < 10 {
		t.Fatalf("%d streams listed (%v)", count, err)
	}

	t0, err := bench.ReadTraffic(ctx, rig.Counters, rig.JS)
	if err != nil {
		t.Fatal(err)
	}
	const n = 60
	st, _, err := bench.LoadAs(ctx, rig.NC, rig.JS, "", "cluster-", n, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Count != n {
		t.Fatalf("%d of %d calls came back", st.Count, n)
	}
	t1, err := bench.ReadTraffic(ctx, rig.Counters, rig.JS)
	if err != nil {
		t.Fatal(err)
	}
	d := t1.Since(t0)
	// One result per call, in its partition's results stream.
	one := d.ByStream[streams.ResultsStream(1)]
	if d.ByStream[streams.StreamIn] != n || d.ByStream[streams.StreamResults]+one != n || one == 0 {
		t.Errorf("%s stored %d, %s %d and %s %d: want one response and one result per call, %d, partition 1's share of the results there", streams.StreamIn, d.ByStream[streams.StreamIn],
			streams.StreamResults, d.ByStream[streams.StreamResults], streams.ResultsStream(1), one, n)
	}
	// The executor records each call in its partition's replay bucket.
	if one := d.ByStream["KV_"+streams.ExecReplayBucket(1)]; one == 0 || one+d.ByStream["KV_"+streams.ExecReplayBucket(0)] < n {
		t.Errorf("the executors' replay buckets stored %v: want partition 1's share of the %d calls there, the rest in partition 0", d.ByStream, n)
	}
	parse := streams.PartitionedStages()[0]
	if name := streams.PartitionStream(parse, 1); d.ByStream[name] == 0 {
		t.Errorf("partition 1 of %s (%s) stored nothing: %v", parse, name, d.ByStream)
	}
	c := d.Per(n).Cluster
	if c == nil || len(c.Nodes) != 3 {
		t.Fatalf("cluster figures %+v, want three nodes", c)
	}
	pc := d.Per(n)
	if pc.Stores <= 0 || math.Abs(c.Stores-3*pc.Stores) > 1e-9 {
		t.Errorf("the cluster stored %.3f per call, the client %.3f: want three times (R3)", c.Stores, pc.Stores)
	}
	var hops float64
	for _, node := range c.Nodes {
		if math.Abs(node.Stores-pc.Stores) > 1e-9 {
			t.Errorf("%s stored %.3f per call, the client %.3f: every node holds a replica of every stream", node.Name, node.Stores, pc.Stores)
		}
		if node.CPUPer1000 <= 0 {
			t.Errorf("%s: CPU %.3f s per 1,000 calls", node.Name, node.CPUPer1000)
		}
		hops += node.HopShare
	}
	if math.Abs(hops-1) > 1e-9 {
		t.Errorf("the nodes lead %.3f of the hops together, want all", hops)
	}
	for name, l := range c.Leaders {
		if l != "nats-0" && l != "nats-1" && l != "nats-2" {
			t.Errorf("%s led by %q, want a node of the cluster", name, l)
		}
	}
	if c.ClientMessages <= 0 || pc.Messages <= c.ClientMessages {
		t.Errorf("messages per call: clients %.1f, all servers %.1f: want the routes' on top of the clients'", c.ClientMessages, pc.Messages)
	}
	if err := rig.Close(); err != nil {
		t.Fatal(err)
	}
}
