package streams

import (
	"fmt"
	"slices"
	"testing"
)

// planInput is the gate streams of P partitions, every stream held by all
// of nodes (listed in the order given: the plan sorts them).
func planInput(p int, nodes ...string) (leaderStream, []leaderStage) {
	gates := leaderStream{Name: StreamGates, Peers: nodes}
	var stages []leaderStage
	for _, stage := range PartitionedStages() {
		st := leaderStage{Laned: Laned(stage)}
		for i := range p {
			st.Partitions = append(st.Partitions, leaderStream{Name: PartitionStream(stage, i), Peers: nodes})
		}
		stages = append(stages, st)
	}
	return gates, stages
}

// hopShares is each node's share of a stage's hops it leads: each stage
// carries one unit, split evenly over its P partitions; without lanes a
// laned stage's partition 0 is TOOLGATE_GATES', with lanes its lane
// stream's.
func hopShares(want map[string]string, p int, lanes bool) map[string]float64 {
	out := map[string]float64{}
	for _, stage := range PartitionedStages() {
		for i := range p {
			name := PartitionStream(stage, i)
			if i == 0 && Laned(stage) && !lanes {
				name = StreamGates
			}
			out[want[name]] += 1 / float64(p)
		}
	}
	return out
}

func TestLeaderPlan_at_P_equal_nodes_each_node_leads_one_partition_of_every_stage_with_lanes_or_without(t *testing.T) {
	gates, stages := planInput(3, "nats-2", "nats-0", "nats-1")
	want := leaderPlan(gates, stages, nil)
	for _, st := range stages {
		led := map[string]string{}
		for _, s := range st.Partitions {
			n := want[s.Name]
			if other, ok := led[n]; ok {
				t.Errorf("%s and %s both led by %s", other, s.Name, n)
			}
			led[n] = s.Name
			if st.Laned && s.Name != st.Partitions[0].Name && n == want[StreamGates] {
				t.Errorf("%s is led by TOOLGATE_GATES' node %s: without lanes that node leads partition 0 of the stage too", s.Name, n)
			}
		}
	}
	for _, lanes := range []bool{true, false} {
		shares := hopShares(want, 3, lanes)
		for _, n := range []string{"nats-0", "nats-1", "nats-2"} {
			if d := shares[n] - 2; d > 0.01 || d < -0.01 { // 6 stages / 3 nodes
				t.Errorf("lanes %v: %s leads %.2f stages' hops, want 2: %v", lanes, n, shares[n], want)
			}
		}
	}
}

func TestLeaderPlan_spreads_each_stage_and_the_streams_at_every_P(t *testing.T) {
	nodes := []string{"nats-0", "nats-1", "nats-2"}
	for p := 1; p <= 5; p++ {
		gates, stages := planInput(p, nodes...)
		want := leaderPlan(gates, stages, nil)
		count := map[string]int{}
		for _, s := range append([]leaderStream{gates}, flatten(stages)...) {
			if !slices.Contains(nodes, want[s.Name]) {
				t.Fatalf("P = %d: %s given %q", p, s.Name, want[s.Name])
			}
			count[want[s.Name]]++
		}
		lo, hi := len(want), 0
		for _, n := range nodes {
			lo, hi = min(lo, count[n]), max(hi, count[n])
		}
		if hi-lo > 1 {
			t.Errorf("P = %d: streams per node %v, want within one", p, count)
		}
		for _, st := range stages {
			led := map[string]int{}
			for _, s := range st.Partitions {
				led[want[s.Name]]++
			}
			if len(led) != min(p, len(nodes)) {
				t.Errorf("P = %d: a stage's partitions led by %v", p, led)
			}
		}
	}
}

func TestLeaderPlan_is_deterministic_and_keeps_to_each_streams_peers(t *testing.T) {
	g1, s1 := planInput(3, "a", "b", "c", "d", "e")
	g2, s2 := planInput(3, "e", "d", "c", "b", "a")
	if a, b := fmt.Sprint(leaderPlan(g1, s1, nil)), fmt.Sprint(leaderPlan(g2, s2, nil)); a != b {
		t.Fatalf("the plan depends on the peers' order:\n%s\n%s", a, b)
	}
	// Five nodes, R3: each stream on three of them.
	all := []string{"a", "b", "c", "d", "e"}
	gates, stages := planInput(3)
	gates.Peers = all[:3]
	k := 0
	for i := range stages {
		for j := range stages[i].Partitions {
			stages[i].Partitions[j].Peers = []string{all[k%5], all[(k+1)%5], all[(k+2)%5]}
			k++
		}
	}
	want := leaderPlan(gates, stages, nil)
	led := map[string]bool{}
	for _, s := range append([]leaderStream{gates}, flatten(stages)...) {
		if !slices.Contains(s.Peers, want[s.Name]) {
			t.Errorf("%s given %s, not one of its peers %v", s.Name, want[s.Name], s.Peers)
		}
		led[want[s.Name]] = true
	}
	if len(led) != 5 {
		t.Errorf("led by %d nodes, want 5", len(led))
	}
	if got := leaderPlan(leaderStream{Name: StreamGates}, nil, nil); got[StreamGates] != "" {
		t.Errorf("a stream without peers is given %q", got[StreamGates])
	}
}

// Toolgate's other streams come after the gate streams, the busiest first,
// each to the least loaded node: at P = 3 the input and the results are led
// by the two nodes that do not lead TOOLGATE_GATES (which, without lanes,
// carries partition 0 of five stages).
func TestLeaderPlan_places_the_input_and_the_results_off_the_gates_node(t *testing.T) {
	nodes := []string{"nats-0", "nats-1", "nats-2"}
	gates, stages := planInput(3, nodes...)
	var others []leaderStream
	for _, name := range otherStreamOrder([]string{"KV_" + BucketTools, StreamDLQ, StreamResults, "KV_" + BucketExecReplay, StreamIn}) {
		others = append(others, leaderStream{Name: name, Peers: nodes})
	}
	if others[0].Name != StreamIn || others[1].Name != StreamResults || others[4].Name != "KV_"+BucketTools {
		t.Fatalf("order %v", others)
	}
	want := leaderPlan(gates, stages, others)
	g, in, res := want[StreamGates], want[StreamIn], want[StreamResults]
	if in == g || res == g || in == res {
		t.Errorf("TOOLGATE_GATES on %s, TOOLGATE_IN on %s, TOOLGATE_RESULTS on %s: want three nodes", g, in, res)
	}
}
