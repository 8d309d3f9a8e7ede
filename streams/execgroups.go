package streams

import (
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/execgroup"
)

// Execute's input is split by executor group (issue 38, docs/design/layout.md
// "Bulkheads and circuit breakers"): policy publishes an approved call to
// ExecuteSubject(group, lane), and each group has its own durable on
// StreamExecute with the group's own MaxAckPending and its own handler pool,
// so a slow or dead group fills only its own slots. The legacy durable
// execute on the exact subject Gate(Execute) in StreamGates stays, so calls
// published before an upgrade (and replays) still drain.
//
// The groups live in their own stream so that every consumer of it is
// execute's: the execute user may create, update, pause and read any
// consumer of StreamExecute and none of any other stream (internal/authz),
// which JetStream's whole-token permissions could not express for durables
// of a shared stream.

// StreamExecute holds calls waiting for their executor group, and the
// scheduled retries of calls whose executor failed.
const StreamExecute = "TOOLGATE_GATE_EXECUTE"

// ExecuteLane is the lane of execute without fairness lanes, and the one a
// group's own durable reads with them (ExecuteGroupConsumers).
const ExecuteLane = "0"

const (
	subjectExecGroups = subjectGate + Execute + ".g."
	subjectExecSched  = subjectGate + Execute + ".s."
)

// DefaultGroupConcurrency is a group's handler goroutines (and its durable's
// MaxAckPending) when its definition sets none.
const DefaultGroupConcurrency = execgroup.DefaultConcurrency

// MaxGroupConcurrency bounds what a definition may ask for.
const MaxGroupConcurrency = execgroup.MaxConcurrency

// ValidGroup reports whether g may name an executor group: it is a subject
// token and part of a durable name.
func ValidGroup(g string) bool { return execgroup.Valid(g) }

// ExecuteSubject is where a call for group waits, in lane.
func ExecuteSubject(group, lane string) string { return subjectExecGroups + group + "." + lane }

// ExecuteGroups matches every group's calls (policy's publish grant).
func ExecuteGroups() string { return subjectExecGroups + ">" }

// ExecuteGroupFilter is the filter of one group's durable.
func ExecuteGroupFilter(group string) string { return subjectExecGroups + group + ".>" }

// ExecuteSchedule is the subject of one scheduled retry of a call of
// group; id is unique per call and attempt (a schedule rolls up its
// subject). No durable reads it: the server publishes the call to its
// target when it is due and removes the schedule.
func ExecuteSchedule(group, id string) string { return subjectExecSched + group + "." + id }

// ExecuteSchedules matches every scheduled retry.
func ExecuteSchedules() string { return subjectExecSched + ">" }

// ExecuteDurable is the durable name of group's consumer.
func ExecuteDurable(group string) string { return Execute + "_g_" + group }

// GroupConcurrencyKey is the metadata key of a group durable's configured
// concurrency: its MaxAckPending is 1 while its circuit is open or
// half-open, and readers (metrics, toolgate status) tell those states from
// a group of one by it.
const GroupConcurrencyKey = "toolgate_concurrency"

// GroupOpenUntilKey is the metadata key a fail-fast group's durable
// carries while its circuit is open (RFC 3339, the end of the cool-down):
// such a durable is never paused, its calls end circuit_open instead of
// waiting, so readers tell its state from this key.
const GroupOpenUntilKey = "toolgate_open_until"

// ExecuteGroupConsumer is group's durable as data: concurrency is its
// MaxAckPending, so the calls it holds at once are the calls it runs.
func ExecuteGroupConsumer(group string, concurrency int) Consumer {
	concurrency = max(concurrency, 1)
	return Consumer{
		Name: ExecuteDurable(group), Stream: StreamExecute, Subject: ExecuteGroupFilter(group),
		Description: "toolgate execute gate: executor group " + group, MaxAckPending: concurrency,
		Metadata: map[string]string{GroupConcurrencyKey: strconv.Itoa(concurrency)},
	}
}

// executeStreamSubjects are StreamExecute's subjects.
func executeStreamSubjects() []string { return []string{ExecuteGroups(), ExecuteSchedules()} }

// groupRetryFloor is the smallest delay of a scheduled retry: a schedule's
// time has a second's resolution.
const groupRetryFloor = time.Second

// Execute's fairness lanes (issue 37): with lanes (Fair.LaneCount > 0) a
// call waits in its executor group's lane, ExecuteSubject(group, lane) with
// the lane token of its tenant and priority; each lane of a group has a
// durable of its own, and the group's worker takes from them in weighted
// round robin with the group's concurrency as its handler goroutines. The
// group's durable keeps its name and reads lane ExecuteLane: what was
// published before lanes, and what replays publish there. Without lanes the
// group's durable reads every lane of the group, as before.

// executeLaneSep joins a group's durable and a lane token in a lane
// durable's name: no group name has it (execgroup.Valid), so no group's
// durable is another group's lane, and readers that list the groups'
// durables by name (metrics) tell lanes from groups.
const executeLaneSep = "~"

// ExecuteLaneDurable is the durable of one lane of group.
func ExecuteLaneDurable(group, lane string) string {
	return ExecuteDurable(group) + executeLaneSep + lane
}

// SplitExecuteLaneDurable is the group and lane of a lane durable's name.
func SplitExecuteLaneDurable(durable string) (group, lane string, ok bool) {
	rest, ok := strings.CutPrefix(durable, ExecuteDurable(""))
	if !ok {
		return "", "", false
	}
	group, lane, ok = strings.Cut(rest, executeLaneSep)
	return group, lane, ok && ValidGroup(group) && lane != ""
}

// ExecuteGroupConsumers are group's durables under s: its own durable
// (ExecuteGroupConsumer), on lane ExecuteLane only when s has lanes, then a
// durable per lane token with the group's MaxAckPending. The group's own
// durable comes first: applying them in order narrows its filter before
// the lanes' filters, disjoint on the work queue, are created.
func (s Settings) ExecuteGroupConsumers(group string, concurrency int) []Consumer {
	main := ExecuteGroupConsumer(group, concurrency)
	if s.Fair.LaneCount() == 0 {
		return []Consumer{main}
	}
	main.Subject = ExecuteSubject(group, ExecuteLane)
	out := []Consumer{main}
	for _, lane := range s.Fair.LaneTokens() {
		c := main
		c.Name, c.Subject = ExecuteLaneDurable(group, lane), ExecuteSubject(group, lane)
		c.Description = "toolgate execute gate: executor group " + group + ", lane " + lane
		out = append(out, c)
	}
	return out
}

// ExecuteGroupLanes are the fairness keys of group's worker, as LaneGroups
// are a laned stage's; nil without lanes.
func (s Settings) ExecuteGroupLanes(group string) []LaneGroup {
	if s.Fair.LaneCount() == 0 {
		return nil
	}
	out := []LaneGroup{{Durables: []string{ExecuteDurable(group)}, Weight: 1}}
	for i := range s.Fair.LaneCount() {
		out = append(out, LaneGroup{
			Durables: []string{ExecuteLaneDurable(group, LaneToken(i, false)), ExecuteLaneDurable(group, LaneToken(i, true))},
			Weight:   s.Fair.LaneWeight(i), Floor: s.Fair.Floor(),
		})
	}
	return out
}
