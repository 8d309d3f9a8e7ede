package streams

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Priorities of a call (wire.HeaderPriority): interactive calls go first
// within their tenant's share, batch calls keep a minimum share.
const (
	PriorityInteractive = wire.PriorityInteractive
	PriorityBatch       = wire.PriorityBatch
)

// DefaultLanes is L, the number of fairness lanes of a laned stage, when
// Fair.Lanes is 0.
const DefaultLanes = 8

// MaxLanes bounds Fair.Lanes: each lane is two durables per laned stage.
const MaxLanes = 64

// DefaultBatchFloor is Fair.BatchFloor when 0: the percent of a lane's
// round kept for its batch calls while interactive ones wait.
const DefaultBatchFloor = 10

// Fair is the deploy-time fair-share configuration (docs/design/layout.md,
// "Fair shares and priority"). Every process of a deployment must have the
// same Lanes: a call is published to the lane its publisher computes, and
// only durables of the applied lanes read it.
type Fair struct {
	// Lanes is L; 0: DefaultLanes.
	Lanes int
	// Tenants is the deployment's tenant list (--tenants): a listed tenant's
	// lane is its position mod L, so up to L listed tenants never share a
	// lane. Any other tenant's lane is fnv32a(tenant) mod L.
	Tenants []string
	// Weights are tenants' weights (default 1). A lane's weight is the sum
	// of the weights of the listed and weighted tenants it carries, at
	// least 1.
	Weights map[string]int
	// Priority is a tenant's default priority, for calls whose producer
	// sent none.
	Priority map[string]string
	// BatchFloor is the percent of a lane's round its batch calls keep
	// while interactive ones wait; 0: DefaultBatchFloor.
	BatchFloor int
	// Partitions is P, the partitions of the gate stages' streams
	// (partitions.go); 0: DefaultPartitions. It is read with the lanes
	// (--partitions, TOOLGATE_PARTITIONS) since it shapes the same
	// subjects: a publisher puts a call in the partition its P gives.
	Partitions int
}

// LaneCount is L.
//
// Lanes 0 is automatic: DefaultLanes where a tenant list is configured,
// and none where it is not — every stage then reads one FIFO durable as
// before fair shares, at today's cost (a deployment of one tenant has no
// neighbour to be fair to; lanes cost CPU per call and idle pull
// consumers). --lanes N turns them on without a list (tenants by hash).
func (f Fair) LaneCount() int {
	if f.Lanes <= 0 {
		if len(f.Tenants) == 0 {
			return 0
		}
		return DefaultLanes
	}
	return min(f.Lanes, MaxLanes)
}

// Floor is BatchFloor with its default.
func (f Fair) Floor() int {
	if f.BatchFloor <= 0 {
		return DefaultBatchFloor
	}
	return min(f.BatchFloor, 100)
}

// LaneOf is the lane token of a call of tenant with priority: the lane
// index and "i" (interactive) or "b" (batch), e.g. "3i". A priority that is
// neither is the tenant's default, and interactive without one.
func LaneOf(tenant, priority string, f Fair) string {
	idx := -1
	for i, t := range f.Tenants {
		if t == tenant {
			idx = i
			break
		}
	}
	return f.token(idx, tenant, priority)
}

// LaneFunc is LaneOf for f with the tenant list looked up in a map, for the
// publishers (a hop of every call computes it).
// nil when f has no lanes: every hop goes to its stage's lane-less subject.
func (f Fair) LaneFunc() func(tenant, priority string) string {
	if f.LaneCount() == 0 {
		return nil
	}
	pos := make(map[string]int, len(f.Tenants))
	for i, t := range f.Tenants {
		if _, dup := pos[t]; !dup {
			pos[t] = i
		}
	}
	return func(tenant, priority string) string {
		idx, ok := pos[tenant]
		if !ok {
			idx = -1
		}
		return f.token(idx, tenant, priority)
	}
}

// token is the lane token of tenant at position idx of the list (-1: not
// listed).
func (f Fair) token(idx int, tenant, priority string) string {
	l := max(f.LaneCount(), 1)
	if idx < 0 {
		idx = int(fnv32a(tenant) % uint32(l))
	} else {
		idx %= l
	}
	return LaneToken(idx, f.batch(tenant, priority))
}

// batch reports whether a call of tenant with priority is batch.
func (f Fair) batch(tenant, priority string) bool {
	switch priority {
	case PriorityBatch:
		return true
	case PriorityInteractive:
		return false
	}
	return f.Priority[tenant] == PriorityBatch
}

// LaneIndex is the index of tenant's lane.
func (f Fair) LaneIndex(tenant string) int {
	tok := LaneOf(tenant, PriorityInteractive, f)
	n, _ := strconv.Atoi(tok[:len(tok)-1])
	return n
}

// LaneToken is the lane token of lane index idx, batch or interactive.
func LaneToken(idx int, batch bool) string {
	if batch {
		return strconv.Itoa(idx) + "b"
	}
	return strconv.Itoa(idx) + "i"
}

// LaneTokens lists every lane token, interactive before batch per index:
// 0i, 0b, 1i, 1b, ...
func (f Fair) LaneTokens() []string {
	var out []string
	for i := range f.LaneCount() {
		out = append(out, LaneToken(i, false), LaneToken(i, true))
	}
	return out
}

// LaneWeight is the weight of lane index idx: the sum of the weights of the
// tenants it carries that the configuration names (listed or weighted;
// default 1 each), at least 1.
func (f Fair) LaneWeight(idx int) int {
	seen := map[string]bool{}
	sum := 0
	add := func(t string) {
		if seen[t] || f.LaneIndex(t) != idx {
			return
		}
		seen[t] = true
		w, ok := f.Weights[t]
		if !ok || w <= 0 {
			w = 1
		}
		sum += w
	}
	for _, t := range f.Tenants {
		add(t)
	}
	for t := range f.Weights {
		add(t)
	}
	return max(sum, 1)
}

// LaneTenants lists the configured tenants whose calls go to lane index
// idx (status shows them beside the lane's backlog).
func (f Fair) LaneTenants(idx int) []string {
	var out []string
	for _, t := range f.Tenants {
		if f.LaneIndex(t) == idx {
			out = append(out, t)
		}
	}
	return out
}

func fnv32a(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// A laned stage's lanes live in a stream of their own (issue 37, "one
// leader for every hop"): LaneStream(stage), TOOLGATE_GATE_<STAGE>, a work
// queue holding GateLanes(stage), toolgate.gate.<stage>.l.<lane>. Five
// tokens, so neither TOOLGATE_GATES' toolgate.gate.* nor toolgate.gate.*.*
// matches them, and the "l" token keeps them apart from execute's
// toolgate.gate.execute.g.> and .s.> (TOOLGATE_GATE_EXECUTE). The server's
// interest check on every acknowledgement of a work-queue stream walks
// every consumer of that stream: with the lanes in TOOLGATE_GATES it walked
// 5 x (2L+1) = 85 durables at L = 8 on every hop; in its stage's stream it
// walks that stage's 2L, and in a cluster each stage's stream has a Raft
// leader of its own.
//
// Before this layout the lanes were toolgate.gate.<stage>.<lane> in
// TOOLGATE_GATES (LegacyGateLane), read by a durable per lane there. Those
// subjects stay in TOOLGATE_GATES and its stage's main durable reads them
// (a second filter), so a hop stored there before the upgrade, or published
// by a process not yet upgraded, is handled once; the old lane durables are
// deleted by Ensure (ensureLaneInputs), which the main durable's wider
// filter needs on a work queue.

// laneStreamPrefix starts a laned stage's stream name; execute's own stream
// (StreamExecute) has the same form.
const laneStreamPrefix = "TOOLGATE_GATE_"

// laneSubjectToken is the token between a stage and its lane in a lane subject.
const laneSubjectToken = ".l."

// LaneStream is the stream of a laned stage's lanes: TOOLGATE_GATE_<STAGE>.
func LaneStream(stage string) string { return laneStreamPrefix + strings.ToUpper(stage) }

// LaneStreams lists the laned stages' streams in pipeline order.
func LaneStreams() []string {
	var out []string
	for _, st := range table() {
		if st.Laned {
			out = append(out, LaneStream(st.Name))
		}
	}
	return out
}

// GateLane is the input subject of one lane of a laned stage:
// toolgate.gate.<stage>.l.<lane>, in LaneStream(stage).
func GateLane(stage, lane string) string { return Gate(stage) + laneSubjectToken + lane }

// GateLanes matches every lane of stage: LaneStream(stage)'s subjects, and
// what a stage routing to stage may publish.
func GateLanes(stage string) string { return GateLane(stage, "*") }

// LegacyGateLane is the subject of a lane before the lanes had their
// stage's stream: toolgate.gate.<stage>.<lane> in TOOLGATE_GATES, read by
// stage's main durable; lane "*" matches them all.
func LegacyGateLane(stage, lane string) string { return Gate(stage) + "." + lane }

// LaneDurable is the durable of one lane of a laned stage: <stage>_<lane>.
func LaneDurable(stage, lane string) string { return stage + "_" + lane }

// Laned reports whether stage takes its input in fairness lanes.
func Laned(stage string) bool {
	st := row(stage)
	return st != nil && st.Laned
}

// LaneConsumers are the lane durables of st, one per lane token, each with
// the limits of st's main durable and a filter of its own, in
// LaneStream(st) (a work queue needs disjoint filters; the main durable, in
// TOOLGATE_GATES, keeps the exact Gate subject, so what was published
// before lanes, and approvals and replays, still drain, and reads the
// legacy lane subjects too).
func (s Settings) LaneConsumers(st Stage) []Consumer {
	if st.Name == Accumulate {
		return s.accumulateLaneConsumers(st)
	}
	if !st.Laned {
		return nil
	}
	var out []Consumer
	for _, lane := range s.Fair.LaneTokens() {
		c := st.Consumer
		c.Name, c.Stream = LaneDurable(st.Name, lane), LaneStream(st.Name)
		c.Subject, c.Subjects = GateLane(st.Name, lane), nil
		c.Description = "toolgate " + st.Name + " gate, lane " + lane
		out = append(out, c)
	}
	return out
}

// StageConsumers lists every durable of st under s: the main one, its
// Extra, then its lanes.
func (s Settings) StageConsumers(st Stage) []Consumer {
	cs := st.Consumers()
	if st.Name == Accumulate && s.zeroForms() { // and partition 0 of TOOLGATE_IN's mapped subjects (in_partitions.go)
		cs[0].Subjects = append(slices.Clone(cs[0].Subjects), InPartitionSubjects(0)...)
	}
	return append(cs, s.LaneConsumers(st)...)
}

// LaneGroup is one fairness key of a laned stage as its worker reads it:
// its durables in priority order (interactive, then batch), its weight, and
// the percent of its share each later durable keeps (worker.Share).
type LaneGroup struct {
	// Stream holds Durables: the stage's own stream for its main durable,
	// LaneStream for a laned gate stage's lanes.
	Stream   string
	Durables []string
	// Streams, when set, is the stream of each of Durables, in order
	// (accumulate reads TOOLGATE_IN and TOOLGATE_RESPONSES); unset: Stream.
	Streams []string
	Weight  int
	Floor   int
}

// LaneGroups are the fairness keys of st's worker: its main durable (what
// was published on the lane-less subject: before the upgrade, approvals
// and replays), then each lane index with its interactive and batch
// durables. nil for a stage without lanes; accumulate always has its main
// group, whose durables read two streams (accumulateLaneGroups).
func (s Settings) LaneGroups(st Stage) []LaneGroup {
	if st.Name == Accumulate {
		return s.accumulateLaneGroups(st)
	}
	if !st.Laned {
		return nil
	}
	out := []LaneGroup{{Stream: st.Stream, Durables: []string{st.Consumer.Name}, Weight: 1}}
	for i := range s.Fair.LaneCount() {
		out = append(out, LaneGroup{
			Stream:   LaneStream(st.Name),
			Durables: []string{LaneDurable(st.Name, LaneToken(i, false)), LaneDurable(st.Name, LaneToken(i, true))},
			Weight:   s.Fair.LaneWeight(i), Floor: s.Fair.Floor(),
		})
	}
	return out
}

// DurableStream is the stream of durable, one of stage's durables: its main
// durable's and its Extra's own, a laned gate stage's lanes in
// LaneStream(stage), accumulate's durables on claimed subjects in
// StreamResponses, the rest (accumulate's lanes) in StreamOf(stage).
func DurableStream(stage, durable string) string {
	if stage == Accumulate && accumulateClaimed(durable) {
		return StreamResponses
	}
	if st := row(stage); st != nil {
		for _, c := range st.Consumers() {
			if c.Name == durable {
				return c.Stream
			}
		}
		if st.Laned {
			return LaneStream(stage)
		}
	}
	return StreamOf(stage)
}

// Durables lists every durable a stage's input waits on with lanes lanes
// (0: the default): its main durable, then its lane durables. A stage's
// backlog is the sum of theirs.
func Durables(stage string, lanes int) []string {
	out := []string{stage}
	st := row(stage)
	if st == nil {
		return out
	}
	if stage == Accumulate { // its main durable on TOOLGATE_RESPONSES, three durables per lane index that carries a listed tenant
		out = append(out, AccumulateClaimed)
		for i := range (Fair{Lanes: lanes}).LaneCount() {
			out = append(out, AccumulateLane(i), AccumulateBatchLane(i), AccumulateClaimedLane(i))
		}
		return out
	}
	for _, c := range (Settings{Fair: Fair{Lanes: lanes}}).LaneConsumers(*st) {
		out = append(out, c.Name)
	}
	return out
}
