package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// ClusterMonitor reads the counters of every node of a NATS cluster from
// its monitoring port and sums them: a client's publish reaches the node it
// is connected to and is forwarded over a route to the stream leader's, and
// the leader replicates the store to the followers over routes, so one
// node's counters are not the bench's traffic; the sum of every node's is.
type ClusterMonitor struct {
	Nodes []ClusterNode
}

// ClusterNode is one node of the cluster: its server name (as a stream's
// cluster info names its leader), its monitoring port and its process.
type ClusterNode struct {
	Name, URL string
	PID       int
}

// Varz sums the nodes' message counters: InMsgs and OutMsgs count
// everything the servers received and sent (clients, routes: forwarded
// publishes and the replication of every store), InClientMsgs and
// OutClientMsgs only what went between clients and servers.
func (c ClusterMonitor) Varz(ctx context.Context) (*server.Varz, error) {
	sum := &server.Varz{}
	for _, n := range c.Nodes {
		v, err := Monitor{URL: n.URL}.Varz(ctx)
		if err != nil {
			return nil, fmt.Errorf("bench: node %s: %w", n.Name, err)
		}
		sum.InMsgs += v.InMsgs
		sum.OutMsgs += v.OutMsgs
		sum.InClientMsgs += v.InClientMsgs
		sum.OutClientMsgs += v.OutClientMsgs
		sum.InBytes += v.InBytes
		sum.OutBytes += v.OutBytes
		sum.InClientBytes += v.InClientBytes
		sum.OutClientBytes += v.OutClientBytes
		sum.Routes += v.Routes
	}
	return sum, nil
}

// NodeStores reads each node's /jsz: by node, the last sequence of every
// stream replica it holds (what that node stored, leader or follower), and
// by stream, the node leading it as that node reports it.
func (c ClusterMonitor) NodeStores(ctx context.Context) (stores map[string]map[string]int64, leaders map[string]string, err error) {
	stores, leaders = map[string]map[string]int64{}, map[string]string{}
	for _, n := range c.Nodes {
		js, err := readJsz(ctx, n.URL)
		if err != nil {
			return nil, nil, fmt.Errorf("bench: node %s: %w", n.Name, err)
		}
		by := map[string]int64{}
		for _, a := range js.AccountDetails {
			for _, s := range a.Streams {
				by[s.Name] = int64(s.State.LastSeq)
				if s.Cluster != nil && s.Cluster.Leader == n.Name {
					leaders[s.Name] = n.Name
				}
			}
		}
		stores[n.Name] = by
	}
	return stores, leaders, nil
}

func readJsz(ctx context.Context, base string) (*server.JSInfo, error) {
	var js server.JSInfo
	if err := getJSON(ctx, strings.TrimSuffix(base, "/")+"/jsz?accounts=true&streams=true", &js); err != nil {
		return nil, err
	}
	return &js, nil
}
