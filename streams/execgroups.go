package streams

import (
	"strconv"
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

// ExecuteLane is the one lane of execute for now; fairness lanes (issue 37)
// come later, through ExecuteSubject only.
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
