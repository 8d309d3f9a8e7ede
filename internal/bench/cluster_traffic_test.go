package bench

import (
	"math"
	"testing"
	"time"
)

// A follower a message behind its leader is not read as agreeing: the
// cluster's stores would be read short.
func TestReplicasAgree_only_when_every_replica_holds_as_many(t *testing.T) {
	same := map[string]map[string]int64{"nats-0": {"A": 5, "B": 2}, "nats-1": {"A": 5}, "nats-2": {"A": 5, "B": 2}}
	if !replicasAgree(same) {
		t.Errorf("%v: want agreeing", same)
	}
	behind := map[string]map[string]int64{"nats-0": {"A": 5}, "nats-1": {"A": 4}, "nats-2": {"A": 5}}
	if replicasAgree(behind) {
		t.Errorf("%v: want a follower behind", behind)
	}
}

// Per call: each node's stores, the stores it leads and its shares (the
// hops: streams, not KV_ buckets), between two readings.
func TestClusterTraffic_per_call_by_node_between_two_readings(t *testing.T) {
	c0 := &ClusterTraffic{ClientMsgs: 100, Nodes: map[string]NodeTraffic{"nats-0": {Stores: 10, CPU: time.Second}, "nats-1": {Stores: 10, CPU: time.Second}}}
	c1 := &ClusterTraffic{ClientMsgs: 300, Leaders: map[string]string{"S": "nats-0", "KV_b": "nats-1"},
		Nodes: map[string]NodeTraffic{"nats-0": {Stores: 50, ClientMsgs: 200, CPU: 3 * time.Second}, "nats-1": {Stores: 50, CPU: 2 * time.Second}}}
	p := c1.since(c0).per(map[string]int64{"S": 30, "KV_b": 10}, 10)
	if p.ClientMessages != 20 || p.Stores != 8 || len(p.Nodes) != 2 {
		t.Fatalf("%+v: want 20 client messages and 8 stores per call on two nodes", p)
	}
	n0, n1 := p.Nodes[0], p.Nodes[1]
	if n0.Name != "nats-0" || n0.Stores != 4 || n0.Led != 3 || n0.HopShare != 1 || n0.StoreShare != 0.75 || n0.ClientMessages != 20 || math.Abs(n0.CPUPer1000-200) > 1e-9 {
		t.Errorf("nats-0: %+v", n0)
	}
	if n1.Led != 1 || n1.HopShare != 0 || n1.StoreShare != 0.25 || math.Abs(n1.CPUPer1000-100) > 1e-9 {
		t.Errorf("nats-1: %+v", n1)
	}
	if (*ClusterTraffic)(nil).since(c0) != nil || (*ClusterTraffic)(nil).per(nil, 10) != nil {
		t.Error("one server: want no cluster figures")
	}
}
