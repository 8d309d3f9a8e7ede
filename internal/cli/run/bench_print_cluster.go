package run

import (
	"fmt"
	"io"
	"strings"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/streams"
)

// printCluster prints, on a cluster, the pipeline's messages and stores
// per call as the client sees them and as the nodes did them, each node's
// stores, leadership and CPU (and its CPU at step 3's load), and each
// stream's leader.
func printCluster(w io.Writer, t bench.TrafficFigures) {
	c, p := t.Pipeline.Cluster, t.Pipeline
	if c == nil {
		return
	}
	fmt.Fprintf(w, "cluster, pipeline per call: messages between toolgate and the servers %.1f; all the servers' together %.1f (the routes' too: publishes forwarded to a stream's leader, the replication of every store); stores: the client's %.1f (each message once, as a stream's sequence counts it), the cluster's total %.1f (every replica's, from each node's /jsz)\n",
		c.ClientMessages, p.Messages, p.Stores, c.Stores)
	fmt.Fprintln(w, "| node | stores per call (its replicas) | stores per call it leads | share of the hops (streams) it leads | share of all stores it leads | client messages per call | CPU s per 1,000 calls |\n|---|---|---|---|---|---|---|")
	for _, n := range c.Nodes {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.0f %% | %.0f %% | %.1f | %.2f |\n", n.Name, n.Stores, n.Led, 100*n.HopShare, 100*n.StoreShare, n.ClientMessages, n.CPUPer1000)
	}
	if h := t.Half.Cluster; h != nil {
		var each []string
		for _, n := range h.Nodes {
			each = append(each, fmt.Sprintf("%s %.2f", n.Name, n.CPUPer1000))
		}
		fmt.Fprintf(w, "each node's CPU s per 1,000 calls at step 3's load: %s\n", strings.Join(each, ", "))
	}
	fmt.Fprintf(w, "leaders of the partitioned gate streams: %s\n", c.FormatLeaders(partitioned))
	fmt.Fprintf(w, "leaders of the other streams and buckets that stored: %s\n", c.FormatLeaders(func(s string) bool { return !partitioned(s) }))
}

// partitioned reports whether stream is the gates stream or a partition
// stream of a partitioned gate stage (streams.PartitionStream).
func partitioned(stream string) bool {
	if stream == streams.StreamGates {
		return true
	}
	for _, stage := range streams.PartitionedStages() {
		for p := range streams.MaxPartitions {
			if stream == streams.PartitionStream(stage, p) {
				return true
			}
		}
	}
	return false
}

// printLeaderMoves says, on a cluster, how toolgate's streams' leaders were
// placed before the steps (streams.SpreadLeaders): how many were moved,
// and any left elsewhere.
func printLeaderMoves(w io.Writer, moves []streams.LeaderMove) {
	if len(moves) == 0 {
		return
	}
	moved, astray := streams.Tally(moves)
	for _, m := range astray {
		fmt.Fprintln(w, "leader not placed:", m)
	}
	fmt.Fprintf(w, "leaders of the %d streams and buckets placed over the nodes as `toolgate streams apply` places them (%d moved from where the servers put them)\n", len(moves), moved)
}
