package streams

import (
	"cmp"
	"slices"
	"strings"
)

// The leaders' plan (issue 37): which node should lead each of toolgate's
// streams on a cluster, a pure function of the streams and their peers, so the same
// streams on the same nodes always get the same plan and a second spread
// moves nothing.
//
// The streams are taken in a fixed order: TOOLGATE_GATES, then each
// partitioned stage's partitions in a row (PartitionedStages' order). Each
// is given the node, among its own peers, that leads the fewest gate
// streams so far (ties: round robin over the sorted nodes), avoiding:
//
//   - the nodes already given to another partition of the same stage, so
//     a stage's P partitions are led by P different nodes when P <= nodes;
//   - for a laned stage's partitions p >= 1, TOOLGATE_GATES' node: without
//     fairness lanes (Fair.LaneCount 0) partition 0's hops of every laned
//     stage are TOOLGATE_GATES' (its main durables' subjects), not its lane
//     stream's. A laned stage's partitions p >= 1 are therefore placed
//     first and its lane stream last: with lanes, the lane stream is
//     partition 0 and lands on the node left (TOOLGATE_GATES', which then
//     carries almost nothing); without them, TOOLGATE_GATES is partition
//     0. Either way, at P = nodes, each node leads one partition of every
//     stage, whether the processes run with lanes or not.
//
// With P > 1 the results streams (TOOLGATE_RESULTS and its partitions'
// TOOLGATE_RESULTS_<k>, results.go) and then the executors' replay buckets
// (KV_toolgate_exec_replay and its partitions' KV_toolgate_exec_replay_<k>,
// partitions_replay.go) come after the gate stages, each as one more stage
// that is not laned: each partition on a different node where possible.
//
// When a constraint leaves no peer it is dropped: first TOOLGATE_GATES'
// node, then the stage's (P > nodes: the stage's next partitions start a
// new round over the nodes).
//
// Then toolgate's other streams and buckets (TOOLGATE_IN, _RESULTS, the
// buckets' KV_toolgate_ streams, ...), each to the least loaded of its
// peers, the busiest first (otherStreamOrder): left to the servers, the
// input and the results, a store per call each, were led by TOOLGATE_GATES'
// node in the bench and made it lead half the hops whatever the gate
// streams' placement.
//
// "Least loaded" counts streams on a deployment that has stored little
// (under planTraffic messages in all): every stream weighs one. Once it
// has traffic, each stream weighs what it has stored (leaderWeights), and
// every stream is taken heaviest first (heaviestFirst), a stage's
// partitions still on different nodes: the plan then balances the stores
// each node leads, not the streams. Counting streams put the idle
// TOOLGATE_IN (the producers' whole responses go to TOOLGATE_RESPONSES)
// on a node of its own, which then led 23 % of the stores and another
// 41 %.

// leaderStream is one stream of the plan: its name, the servers that
// hold a replica (its peers, leader included) and the messages it has
// stored since it was created (its last sequence: a work-queue stream's
// hops too, though acknowledged ones are gone).
type leaderStream struct {
	Name   string
	Peers  []string
	Stored uint64
}

// planTraffic is the stores, over all of toolgate's streams, from which
// the plan weighs each stream by what it stored (leaderWeights): below
// it, a deployment that has carried (almost) nothing yet, every stream
// weighs one.
const planTraffic = 1000

// leaderStage is a partitioned stage's streams, partition 0 first.
type leaderStage struct {
	Laned      bool
	Partitions []leaderStream
}

// leaderPlan assigns each stream of gates, stages and others a node to
// lead it.
func leaderPlan(gates leaderStream, stages []leaderStage, others []leaderStream) map[string]string {
	all := append(append([]leaderStream{gates}, flatten(stages)...), others...)
	pl := planner{want: map[string]string{}, load: map[string]float64{}, weight: leaderWeights(all)}
	for _, s := range all {
		for _, n := range s.Peers {
			if !slices.Contains(pl.nodes, n) {
				pl.nodes = append(pl.nodes, n)
			}
		}
	}
	slices.Sort(pl.nodes)
	if pl.weighed() {
		return pl.heaviestFirst(gates, stages, others)
	}
	gatesNode := pl.assign(gates, nil, nil)
	for _, st := range stages {
		used := map[string]bool{}
		order := st.Partitions
		var avoid []string
		if st.Laned && len(order) > 1 {
			order = append(slices.Clone(order[1:]), order[0]) // p >= 1 first, partition 0 (its lane stream) last
			avoid = []string{gatesNode}
		}
		for i, s := range order {
			if st.Laned && i == len(order)-1 {
				avoid = nil // the lane stream may share TOOLGATE_GATES' node
			}
			used[pl.assign(s, used, avoid)] = true
		}
	}
	for _, s := range others {
		pl.assign(s, nil, nil)
	}
	return pl.want
}

// heaviestFirst is the plan once the streams weigh what they stored:
// every stream, gate streams and others alike, the heaviest first (ties in
// the order given), each to the least loaded of its peers that leads no
// other partition of its stage. The counting plan's order (the gate
// streams first, a laned stage's partitions off TOOLGATE_GATES' node)
// guesses where the hops go; the weights say it, and taking the others
// after the stages put the heaviest of them, the claimed responses (a
// store per call), on whatever node the stages had left least loaded by
// a little, which then led 40 % of the stores.
func (pl *planner) heaviestFirst(gates leaderStream, stages []leaderStage, others []leaderStream) map[string]string {
	type item struct {
		s     leaderStream
		stage int // index in stages; -1 for none
	}
	items := []item{{gates, -1}}
	for i, st := range stages {
		for _, s := range st.Partitions {
			items = append(items, item{s, i})
		}
	}
	for _, s := range others {
		items = append(items, item{s, -1})
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(b.s.Stored, a.s.Stored) })
	used := make([]map[string]bool, len(stages))
	for i := range used {
		used[i] = map[string]bool{}
	}
	for _, it := range items {
		var u map[string]bool
		if it.stage >= 0 {
			u = used[it.stage]
		}
		if n := pl.assign(it.s, u, nil); u != nil {
			u[n] = true
		}
	}
	return pl.want
}

// otherStreamOrder sorts toolgate's streams that are not gate streams in
// the order the plan places them: the busiest first (stores per call in
// the bench: TOOLGATE_IN (or TOOLGATE_RESPONSES, where a tenant's whole
// responses are stored) and _RESULTS one each, the executors' replay
// bucket 1.2, response ids 1.0, dead letters 0.4), then the others by
// name.
func otherStreamOrder(names []string) []string {
	busy := []string{StreamIn, StreamResults, StreamResponses, "KV_" + BucketExecReplay, "KV_" + BucketResponseIDs, StreamDLQ, "KV_" + BucketCalls, StreamAudit}
	rank := func(n string) int {
		if i := slices.Index(busy, n); i >= 0 {
			return i
		}
		return len(busy)
	}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return out
}

func flatten(stages []leaderStage) []leaderStream {
	var out []leaderStream
	for _, st := range stages {
		out = append(out, st.Partitions...)
	}
	return out
}

// leaderWeights is each stream's weight in the plan: what it stored, once
// the streams together stored planTraffic or more; otherwise none (every
// stream weighs one).
func leaderWeights(all []leaderStream) map[string]float64 {
	var total uint64
	for _, s := range all {
		total += s.Stored
	}
	if total < planTraffic {
		return nil
	}
	w := make(map[string]float64, len(all))
	for _, s := range all {
		w[s.Name] = float64(s.Stored) / float64(total)
	}
	return w
}

// planner is leaderPlan's state: the nodes, sorted; the weight each leads
// in the plan so far; each stream's weight (nil: one each); the plan; how
// many streams it has assigned.
type planner struct {
	nodes  []string
	load   map[string]float64
	weight map[string]float64
	want   map[string]string
	n      int
}

// weighed reports whether the streams weigh what they stored.
func (pl *planner) weighed() bool { return pl.weight != nil }

// weightOf is what leading s adds to a node's load.
func (pl *planner) weightOf(s leaderStream) float64 {
	if pl.weight == nil {
		return 1
	}
	return pl.weight[s.Name]
}

// assign gives s the least loaded of its peers that is neither in used
// (the stage's nodes so far; reset once it holds every peer) nor in avoid
// (dropped when nothing else is left); ties go to the first node at or
// after the round robin's place. It returns "" for a stream without peers.
func (pl *planner) assign(s leaderStream, used map[string]bool, avoid []string) string {
	if len(s.Peers) == 0 {
		return ""
	}
	free := func(n string) bool { return !used[n] }
	if !slices.ContainsFunc(s.Peers, free) {
		clear(used) // every peer leads one of the stage's partitions: a new round
	}
	cands := filter(s.Peers, func(n string) bool { return free(n) && !slices.Contains(avoid, n) })
	if len(cands) == 0 {
		cands = filter(s.Peers, free)
	}
	start := pl.n % max(len(pl.nodes), 1)
	pl.n++
	best, bestLoad, bestTurn := "", 0.0, 0
	for _, n := range cands {
		load, turn := pl.load[n], (slices.Index(pl.nodes, n)-start+len(pl.nodes))%len(pl.nodes)
		if best == "" || load < bestLoad || (load == bestLoad && turn < bestTurn) {
			best, bestLoad, bestTurn = n, load, turn
		}
	}
	pl.load[best] += pl.weightOf(s)
	pl.want[s.Name] = best
	return best
}

func filter(in []string, keep func(string) bool) []string {
	var out []string
	for _, s := range in {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}
