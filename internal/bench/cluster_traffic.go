package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ClusterTraffic is what the nodes of a cluster did, read from each node's
// monitoring port: the messages between clients and servers (without the
// routes' forwarding and replication, which Traffic's InMsgs and OutMsgs
// include), and by node the messages it stored (as leader or follower of a
// stream: a replicated stream stores each message on every replica) and
// its CPU; and which node leads each stream.
type ClusterTraffic struct {
	ClientMsgs int64                  `json:"client_msgs"`
	Nodes      map[string]NodeTraffic `json:"nodes"`
	Leaders    map[string]string      `json:"leaders"` // stream → node
}

// NodeTraffic is one node's stores, the messages between it and its
// clients (a client is connected to one node of the URL list, picked at
// random) and its CPU.
type NodeTraffic struct {
	Stores     int64         `json:"stores"`
	ClientMsgs int64         `json:"client_msgs"`
	CPU        time.Duration `json:"cpu_ns"`
}

// replicaWait is how long readClusterTraffic waits for the followers to
// store what their leaders stored before it reads them as they are.
const replicaWait = 10 * time.Second

// readClusterTraffic reads every node's stores and leaders (waiting up to
// replicaWait until each stream's replicas hold as many messages as each
// other, so that a follower a few messages behind is not read short) and
// its CPU; v is the nodes' summed counters.
func readClusterTraffic(ctx context.Context, c ClusterMonitor, v *server.Varz) (*ClusterTraffic, error) {
	var stores map[string]map[string]int64
	var leaders map[string]string
	deadline := time.Now().Add(replicaWait)
	for {
		var err error
		if stores, leaders, err = c.NodeStores(ctx); err != nil {
			return nil, err
		}
		if replicasAgree(stores) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	ct := &ClusterTraffic{ClientMsgs: v.InClientMsgs + v.OutClientMsgs, Nodes: map[string]NodeTraffic{}, Leaders: leaders}
	for _, n := range c.Nodes {
		var sum int64
		for _, s := range stores[n.Name] {
			sum += s
		}
		nv, err := Monitor{URL: n.URL}.Varz(ctx)
		if err != nil {
			return nil, fmt.Errorf("bench: node %s: %w", n.Name, err)
		}
		ct.Nodes[n.Name] = NodeTraffic{Stores: sum, ClientMsgs: nv.InClientMsgs + nv.OutClientMsgs, CPU: ProcCPU(n.PID)}
	}
	return ct, nil
}

// replicasAgree reports whether every stream's replicas hold the same last
// sequence on every node that holds one.
func replicasAgree(stores map[string]map[string]int64) bool {
	seen := map[string]int64{}
	for _, by := range stores {
		for name, s := range by {
			if prev, ok := seen[name]; ok && prev != s {
				return false
			}
			seen[name] = s
		}
	}
	return true
}

// since is the traffic between c0 and c; the leaders are c's.
func (c *ClusterTraffic) since(c0 *ClusterTraffic) *ClusterTraffic {
	if c == nil {
		return nil
	}
	d := &ClusterTraffic{ClientMsgs: c.ClientMsgs, Nodes: map[string]NodeTraffic{}, Leaders: c.Leaders}
	if c0 != nil {
		d.ClientMsgs -= c0.ClientMsgs
	}
	for name, n := range c.Nodes {
		var n0 NodeTraffic
		if c0 != nil {
			n0 = c0.Nodes[name]
		}
		d.Nodes[name] = NodeTraffic{Stores: n.Stores - n0.Stores, ClientMsgs: n.ClientMsgs - n0.ClientMsgs, CPU: n.CPU - n0.CPU}
	}
	return d
}

// ClusterPerCall is ClusterTraffic over n calls: the client's messages and
// the cluster's stores per call (every node's, the replicas' included,
// against PerCall.Stores, the client's: each message stored once, as a
// stream's sequence counts it), and by node.
type ClusterPerCall struct {
	ClientMessages float64           `json:"client_nats_messages"`
	Stores         float64           `json:"cluster_stores"`
	Nodes          []NodePerCall     `json:"nodes"`
	Leaders        map[string]string `json:"leaders"` // of the streams that stored any
}

// NodePerCall is one node's figures per call: what it stored (leader or
// follower), the messages between it and its clients, its CPU per 1,000
// calls, and the share of the hops (stores in streams, not buckets) and of
// all stores whose stream it leads.
type NodePerCall struct {
	Name           string  `json:"name"`
	Stores         float64 `json:"stores"`
	ClientMessages float64 `json:"client_nats_messages"`
	CPUPer1000     float64 `json:"cpu_s_per_1000"`
	Led            float64 `json:"stores_led"`
	HopShare       float64 `json:"hop_share"`
	StoreShare     float64 `json:"store_share"`
}

// per divides c over n calls; byStream is the client's stores by stream.
func (c *ClusterTraffic) per(byStream map[string]int64, n int) *ClusterPerCall {
	if c == nil || n <= 0 {
		return nil
	}
	p := &ClusterPerCall{ClientMessages: float64(c.ClientMsgs) / float64(n), Leaders: map[string]string{}}
	led, ledHops := map[string]int64{}, map[string]int64{}
	var all, hops int64
	for name, s := range byStream {
		l := c.Leaders[name]
		p.Leaders[name] = l
		led[l] += s
		all += s
		if !strings.HasPrefix(name, "KV_") {
			ledHops[l] += s
			hops += s
		}
	}
	for name, nt := range c.Nodes {
		p.Stores += float64(nt.Stores) / float64(n)
		p.Nodes = append(p.Nodes, NodePerCall{
			Name: name, Stores: float64(nt.Stores) / float64(n), ClientMessages: float64(nt.ClientMsgs) / float64(n), CPUPer1000: nt.CPU.Seconds() * 1000 / float64(n),
			Led: float64(led[name]) / float64(n), HopShare: share(ledHops[name], hops), StoreShare: share(led[name], all),
		})
	}
	sort.Slice(p.Nodes, func(i, j int) bool { return p.Nodes[i].Name < p.Nodes[j].Name })
	return p
}

func share(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// FormatLeaders writes the leader of each stream of names, sorted, as
// "NAME nats-0, …"; "(none)" for a stream without one.
func (p *ClusterPerCall) FormatLeaders(keep func(stream string) bool) string {
	var out []string
	for name, l := range p.Leaders {
		if !keep(name) {
			continue
		}
		if l == "" {
			l = "(none)"
		}
		out = append(out, fmt.Sprintf("%s %s", name, l))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
