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

// benchTraffic is what the bench's calls stored per stream at P = 3
// without lanes, per 1,000 calls (`toolgate bench --nats cluster
// --partitions 3`, merged main with the results partitioned): the gate
// streams (a laned stage's partition 0 in TOOLGATE_GATES, its lane stream
// idle), the results and the executors' replay records in three
// partitions each, placed as stages, one store per call in
// TOOLGATE_RESPONSES, dead letters, and an idle TOOLGATE_IN (producers
// send whole responses to TOOLGATE_RESPONSES).
func benchTraffic(nodes []string) (leaderStream, []leaderStage, []leaderStream) {
	stored := map[string]uint64{StreamGates: 1150, StreamResponses: 1000, StreamDLQ: 400, StreamIn: 0, "KV_" + BucketTools: 2,
		"KV_" + ExecReplayBucket(0): 410, "KV_" + ExecReplayBucket(1): 380, "KV_" + ExecReplayBucket(2): 400,
		ResultsStream(0): 340, ResultsStream(1): 330, ResultsStream(2): 330,
		"TOOLGATE_GATE_PARSE_1": 330, "TOOLGATE_GATE_PARSE_2": 330, "TOOLGATE_GATE_VALIDATE_1": 260, "TOOLGATE_GATE_VALIDATE_2": 270,
		"TOOLGATE_GATE_BUSINESS_1": 190, "TOOLGATE_GATE_BUSINESS_2": 200, "TOOLGATE_GATE_POLICY_1": 190, "TOOLGATE_GATE_POLICY_2": 200,
		"TOOLGATE_GATE_REPAIR_1": 140, "TOOLGATE_GATE_REPAIR_2": 130,
		"TOOLGATE_GATE_EXECUTE": 210, "TOOLGATE_GATE_EXECUTE_1": 190, "TOOLGATE_GATE_EXECUTE_2": 200}
	gates, stages := planInput(3, nodes...)
	gates.Stored = stored[gates.Name]
	for i := range stages {
		for j := range stages[i].Partitions {
			stages[i].Partitions[j].Stored = stored[stages[i].Partitions[j].Name]
		}
	}
	for _, name := range []func(int) string{ResultsStream, func(p int) string { return "KV_" + ExecReplayBucket(p) }} {
		st := leaderStage{}
		for p := range 3 {
			st.Partitions = append(st.Partitions, leaderStream{Name: name(p), Peers: nodes, Stored: stored[name(p)]})
		}
		stages = append(stages, st)
	}
	var others []leaderStream
	for _, n := range otherStreamOrder([]string{StreamIn, StreamResponses, StreamDLQ, "KV_" + BucketTools}) {
		others = append(others, leaderStream{Name: n, Peers: nodes, Stored: stored[n]})
	}
	return gates, stages, others
}

// storesLed is each node's share of all the stores the streams made,
// as the plan places their leaders.
func storesLed(want map[string]string, all []leaderStream) map[string]float64 {
	var total float64
	led := map[string]float64{}
	for _, s := range all {
		led[want[s.Name]] += float64(s.Stored)
		total += float64(s.Stored)
	}
	for n := range led {
		led[n] /= total
	}
	return led
}

// Counting streams, the idle TOOLGATE_IN took a node's place among the
// busy ones and the nodes led 36 / 23 / 41 % of the stores (bench --nats
// cluster --partitions 3); weighing only the others, placed after the
// stages, put the claimed responses on a node the stages had left least
// loaded by a little: 27 / 32 / 40 %. Weighed and heaviest first, no
// node leads more than 35.5 % (an even split is 33.3 %), each stage's
// partitions still on different nodes.
func TestLeaderPlan_with_traffic_balances_the_stores_led_not_the_streams(t *testing.T) {
	nodes := []string{"nats-0", "nats-1", "nats-2"}
	gates, stages, others := benchTraffic(nodes)
	all := append(append([]leaderStream{gates}, flatten(stages)...), others...)
	want := leaderPlan(gates, stages, others)
	led := storesLed(want, all)
	for _, n := range nodes {
		if led[n] > 0.355 {
			t.Errorf("%s leads %.1f %% of the stores, want at most 35.5 %%: %v", n, 100*led[n], led)
		}
	}
	for _, st := range stages {
		seen := map[string]bool{}
		for _, s := range st.Partitions {
			if seen[want[s.Name]] {
				t.Errorf("two partitions of %s's stage on %s", s.Name, want[s.Name])
			}
			seen[want[s.Name]] = true
		}
	}
	if again := leaderPlan(gates, stages, others); fmt.Sprint(again) != fmt.Sprint(want) {
		t.Errorf("the same traffic gives another plan:\n%v\n%v", want, again)
	}
}

// Below planTraffic stores in all, every stream weighs one: the plan of a
// deployment that has carried nothing yet is the streams' count's.
func TestLeaderPlan_without_traffic_counts_streams(t *testing.T) {
	nodes := []string{"nats-0", "nats-1", "nats-2"}
	gates, stages, others := benchTraffic(nodes)
	zero := func(s []leaderStream) {
		for i := range s {
			s[i].Stored = 0
		}
	}
	zero([]leaderStream{gates})
	for _, st := range stages {
		zero(st.Partitions)
	}
	zero(others)
	gates.Stored = planTraffic - 1
	want := leaderPlan(gates, stages, others)
	count := map[string]int{}
	for _, s := range append(append([]leaderStream{gates}, flatten(stages)...), others...) {
		count[want[s.Name]]++
	}
	lo, hi := len(want), 0
	for _, n := range nodes {
		lo, hi = min(lo, count[n]), max(hi, count[n])
	}
	if hi-lo > 1 {
		t.Errorf("streams per node %v, want within one", count)
	}
}
