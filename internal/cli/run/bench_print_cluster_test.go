package run

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/streams"
)

// The cluster's lines: the client's and the cluster's figures side by side,
// a row per node, and the partitioned gate streams' leaders apart from the
// other streams' (TOOLGATE_GATE_PARSE_1 is a partition, TOOLGATE_GATES
// partition 0, TOOLGATE_IN neither); on one server nothing.
func TestPrintCluster_names_each_streams_leader_and_each_nodes_figures(t *testing.T) {
	var none strings.Builder
	printCluster(&none, bench.TrafficFigures{Pipeline: bench.PerCall{Messages: 30, Stores: 9.6}})
	if none.Len() != 0 {
		t.Fatalf("one server printed %q", none.String())
	}
	part := streams.PartitionStream(streams.PartitionedStages()[0], 1)
	c := &bench.ClusterPerCall{ClientMessages: 32.8, Stores: 28.8,
		Nodes:   []bench.NodePerCall{{Name: "nats-0", Stores: 9.6, Led: 4.6, HopShare: 0.6, StoreShare: 0.48, ClientMessages: 32.8, CPUPer1000: 0.91}, {Name: "nats-1", Stores: 9.6, Led: 5, HopShare: 0.4, StoreShare: 0.52, CPUPer1000: 0.8}},
		Leaders: map[string]string{streams.StreamGates: "nats-0", part: "nats-1", streams.StreamIn: "nats-1"}}
	var out strings.Builder
	printCluster(&out, bench.TrafficFigures{Pipeline: bench.PerCall{Messages: 127, Stores: 9.6, Cluster: c}, Half: bench.PerCall{Cluster: c}})
	s := out.String()
	for _, want := range []string{
		"between toolgate and the servers 32.8; all the servers' together 127.0",
		"the client's 9.6 (each message once", "the cluster's total 28.8",
		"| nats-0 | 9.60 | 4.60 | 60 % | 48 % | 32.8 | 0.91 |",
		"at step 3's load: nats-0 0.91, nats-1 0.80",
		"leaders of the partitioned gate streams: " + streams.StreamGates + " nats-0, " + part + " nats-1\n",
		"leaders of the other streams and buckets that stored: " + streams.StreamIn + " nats-1\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in:\n%s", want, s)
		}
	}
}
