package streams

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Partitions of the gate stages' streams (issue 37, docs/design/layout.md
// "Partitions"). In a NATS cluster a stream is one Raft group with one
// leader, so a stage's one stream puts every hop of that stage through one
// server. With P partitions a call's hops go to partition
// Partition(tenant, response id, P) of each stage: partition 0 is the
// layout without partitions, exactly (TOOLGATE_GATES, TOOLGATE_GATE_<STAGE>,
// TOOLGATE_GATE_EXECUTE, their subjects and durables), so P = 1 is today's
// layout at today's cost. Partition p >= 1 of a partitioned stage is a
// work-queue stream of its own, PartitionStream(stage, p),
// TOOLGATE_GATE_<STAGE>_<p>, holding toolgate.gate.<stage>.p<p>.> and the
// stage's durables under the same names as in partition 0:
//
//   - a laned gate stage's main durable <stage> on
//     toolgate.gate.<stage>.p<p>.m (what partition 0 carries on
//     TOOLGATE_GATES' toolgate.gate.<stage>), and its lane durables
//     <stage>_<lane> on toolgate.gate.<stage>.p<p>.l.<lane>;
//   - execute's groups' durables on toolgate.gate.execute.p<p>.g.<group>.>
//     (lanes .g.<group>.<lane>), their scheduled retries on
//     toolgate.gate.execute.p<p>.s.<group>.<id> (a schedule targets a
//     subject of its own stream).
//
// Five tokens or more with "p<p>" fourth: neither TOOLGATE_GATES'
// toolgate.gate.* and toolgate.gate.*.*, nor a lane stream's
// toolgate.gate.<stage>.l.*, nor execute's .g.> and .s.> match them.
//
// Workers read every partition stream that exists (PartitionStreamsOf),
// publishers use their own P: raising P creates streams that workers find
// at their next look; lowering it leaves the streams beyond P to drain
// through their durables, and Prune deletes them once empty.

// DefaultPartitions is P when none is configured.
const DefaultPartitions = 1

// MaxPartitions bounds P: each partition is a stream per partitioned stage
// and a bucket of the executors' records (wire.MaxPartitions, which
// executors check).
const MaxPartitions = wire.MaxPartitions

// PartitionCount is P, at least 1.
func (f Fair) PartitionCount() int {
	if f.Partitions <= 0 {
		return DefaultPartitions
	}
	return min(f.Partitions, MaxPartitions)
}

// Partition is the partition of a call of tenant in response responseID
// with p partitions: fnv32a(tenant + "\x00" + responseID) mod p, so a
// response's calls, and so a batch's, share one.
func Partition(tenant, responseID string, p int) int {
	if p <= 1 {
		return 0
	}
	return int(fnv32a(tenant+"\x00"+responseID) % uint32(p))
}

// Partitioned reports whether stage's input is partitioned: the laned gate
// stages and execute's groups (accumulate's input, TOOLGATE_IN, is not).
func Partitioned(stage string) bool { return stage == Execute || Laned(stage) }

// PartitionStream is partition p's stream of a partitioned stage; p = 0 is
// the stage's stream of before partitions (its lanes' stream, or
// StreamExecute for execute's groups).
func PartitionStream(stage string, p int) string {
	base := LaneStream(stage) // TOOLGATE_GATE_EXECUTE for execute
	if p <= 0 {
		return base
	}
	return base + "_" + strconv.Itoa(p)
}

// partitionStreamIndex is p of a stream name PartitionStream(stage, p),
// p >= 1; false for any other name.
func partitionStreamIndex(stage, name string) (int, bool) {
	return suffixPartition(LaneStream(stage), name)
}

// IsPartitionStream reports whether name is a partition stream p >= 1 of
// a partitioned stage (PartitionStream).
func IsPartitionStream(name string) bool {
	for _, stage := range PartitionedStages() {
		if _, ok := partitionStreamIndex(stage, name); ok {
			return true
		}
	}
	return false
}

// partitionPrefix is the subject prefix of partition p >= 1 of stage.
func partitionPrefix(stage string, p int) string {
	return Gate(stage) + ".p" + strconv.Itoa(p) + "."
}

// PartitionSubjects are the subjects of partition p >= 1's stream of stage.
func PartitionSubjects(stage string, p int) []string {
	return []string{partitionPrefix(stage, p) + ">"}
}

// PartitionGate is partition p's subject of a laned stage's main durable:
// Gate(stage) for p = 0.
func PartitionGate(stage string, p int) string {
	if p <= 0 {
		return Gate(stage)
	}
	return partitionPrefix(stage, p) + "m"
}

// PartitionGateLane is partition p's subject of a lane of a laned stage:
// GateLane(stage, lane) for p = 0.
func PartitionGateLane(stage, lane string, p int) string {
	if p <= 0 {
		return GateLane(stage, lane)
	}
	return partitionPrefix(stage, p) + "l." + lane
}

// PartitionExecuteSubject is partition p's subject of a call waiting for
// group in lane: ExecuteSubject for p = 0.
func PartitionExecuteSubject(group, lane string, p int) string {
	if p <= 0 {
		return ExecuteSubject(group, lane)
	}
	return partitionPrefix(Execute, p) + "g." + group + "." + lane
}

// PartitionExecuteGroups matches every group's calls of partition p.
func PartitionExecuteGroups(p int) string {
	if p <= 0 {
		return ExecuteGroups()
	}
	return partitionPrefix(Execute, p) + "g.>"
}

// PartitionExecuteSchedules matches the scheduled retries of partition p.
func PartitionExecuteSchedules(p int) string {
	if p <= 0 {
		return ExecuteSchedules()
	}
	return partitionPrefix(Execute, p) + "s.>"
}

// ScheduleFor is the subject of a scheduled retry, id, of a call of group
// waiting on subject: in the partition subject is of, since a schedule
// targets a subject of its own stream.
func ScheduleFor(group, subject, id string) string {
	if p := subjectPartition(subject); p > 0 {
		return partitionPrefix(Execute, p) + "s." + group + "." + id
	}
	return ExecuteSchedule(group, id)
}

// subjectPartition is the partition of a gate subject: p of
// toolgate.gate.<stage>.p<p>.…, else 0.
func subjectPartition(subject string) int {
	rest, ok := strings.CutPrefix(subject, subjectGate)
	if !ok {
		return 0
	}
	toks := strings.SplitN(rest, ".", 3)
	if len(toks) < 3 || len(toks[1]) < 2 || toks[1][0] != 'p' {
		return 0
	}
	p, err := strconv.Atoi(toks[1][1:])
	if err != nil || p < 1 {
		return 0
	}
	return p
}

// PartitionConsumers are st's durables in partition p >= 1 under s: a
// laned stage's main durable and lane durables (each with the limits of
// its partition 0 durable); accumulate's durables in ResponsesStream(p);
// none for another stage (execute's groups'
// are ExecuteGroupPartitionConsumers).
func (s Settings) PartitionConsumers(st Stage, p int) []Consumer {
	if st.Name == Accumulate { // its durables in claimed partition p (claimed_partitions.go) and in TOOLGATE_IN's (in_partitions.go)
		if p <= 0 {
			return nil
		}
		return append(s.accumulatePartitionConsumers(st, p), s.accumulateInPartitionConsumers(st, p)...)
	}
	if !st.Laned || p <= 0 {
		return nil
	}
	stream := PartitionStream(st.Name, p)
	main := st.Consumer
	main.Stream, main.Subject, main.Subjects = stream, PartitionGate(st.Name, p), nil
	main.Description += ", partition " + strconv.Itoa(p)
	out := []Consumer{main}
	for _, c := range s.LaneConsumers(st) {
		lane, _ := strings.CutPrefix(c.Name, st.Name+"_")
		c.Stream, c.Subject = stream, PartitionGateLane(st.Name, lane, p)
		c.Description += ", partition " + strconv.Itoa(p)
		out = append(out, c)
	}
	return out
}

// ExecuteGroupPartitionConsumers are group's durables in partition p >= 1:
// ExecuteGroupConsumers' names and limits on that partition's subjects.
func (s Settings) ExecuteGroupPartitionConsumers(group string, concurrency, p int) []Consumer {
	cs := s.ExecuteGroupConsumers(group, concurrency)
	if p <= 0 {
		return cs
	}
	for i := range cs {
		cs[i].Stream = PartitionStream(Execute, p)
		switch {
		case i == 0 && s.Fair.LaneCount() == 0:
			cs[i].Subject = partitionPrefix(Execute, p) + "g." + group + ".>"
		case i == 0:
			cs[i].Subject = PartitionExecuteSubject(group, ExecuteLane, p)
		default:
			_, lane, _ := SplitExecuteLaneDurable(cs[i].Name)
			cs[i].Subject = PartitionExecuteSubject(group, lane, p)
		}
		cs[i].Description += ", partition " + strconv.Itoa(p)
	}
	return cs
}

// PartitionedStages lists the stages whose input is partitioned, in
// pipeline order.
func PartitionedStages() []string {
	var out []string
	for _, st := range table() {
		if Partitioned(st.Name) {
			out = append(out, st.Name)
		}
	}
	return out
}

// partitionStreamConfigs are the streams of partitions 1 to P-1: each like
// its stage's partition 0 stream (limits, replicas, retention, schedules),
// on its own subjects.
func (s Settings) partitionStreamConfigs(zero []jetstream.StreamConfig) []jetstream.StreamConfig {
	var out []jetstream.StreamConfig
	for _, stage := range PartitionedStages() {
		i := slices.IndexFunc(zero, func(c jetstream.StreamConfig) bool { return c.Name == PartitionStream(stage, 0) })
		if i < 0 {
			continue
		}
		for p := 1; p < s.Fair.PartitionCount(); p++ {
			c := zero[i]
			c.Name, c.Subjects = PartitionStream(stage, p), PartitionSubjects(stage, p)
			out = append(out, c)
		}
	}
	return out
}

// PartitionStreamsOf lists the partition streams of stage that exist, p
// >= 1, in order of p: what its workers read besides partition 0, whatever
// this process's P (a lowered P's streams drain; a raised P's are found).
func PartitionStreamsOf(ctx context.Context, js jetstream.JetStream, stage string) ([]int, error) {
	_, ps, err := listPartitions(ctx, js, Gate(stage)+".>", "", func(name string) (int, bool) { return partitionStreamIndex(stage, name) })
	if err != nil {
		return nil, fmt.Errorf("streams: partition streams of %s: %w", stage, err)
	}
	return ps, nil
}

// PartitionStreamNames names the partition streams of stage that exist,
// p >= 1, in order of p (PartitionStreamsOf); none for a stage that is not
// partitioned.
func PartitionStreamNames(ctx context.Context, js jetstream.JetStream, stage string) ([]string, error) {
	if !Partitioned(stage) {
		return nil, nil
	}
	ps, err := PartitionStreamsOf(ctx, js, stage)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, PartitionStream(stage, p))
	}
	return out, nil
}

// AllPartitionStreams lists every partition stream (p >= 1) of every
// partitioned stage that exists.
func AllPartitionStreams(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	var out []string
	for _, stage := range PartitionedStages() {
		names, err := PartitionStreamNames(ctx, js, stage)
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

// Prune deletes the partition streams beyond s's P that hold nothing, and
// names them; a stream that still holds hops is left to drain (its
// workers read it) and named in kept, and so is a results stream beyond P
// that holds results (pruneResults: readers read it until they age out). Run it once every process runs with
// the lowered P: a process with the old P may still publish to them.
func Prune(ctx context.Context, js jetstream.JetStream, s Settings) (deleted, kept []string, err error) {
	for _, stage := range PartitionedStages() {
		ps, err := PartitionStreamsOf(ctx, js, stage)
		if err != nil {
			return deleted, kept, err
		}
		d, k, err := pruneBeyond(ctx, js, ps, s.Fair.PartitionCount(), func(p int) string { return PartitionStream(stage, p) })
		deleted, kept = append(deleted, d...), append(kept, k...)
		if err != nil {
			return deleted, kept, err
		}
	}
	d, k, err := pruneResults(ctx, js, s)
	deleted, kept = append(deleted, d...), append(kept, k...)
	if err != nil {
		return deleted, kept, err
	}
	d, k, err = pruneIn(ctx, js, s)
	return append(deleted, d...), append(kept, k...), err
}
