package pipeline

import (
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

// Emitter turns what the gates of one pipeline return into the messages the
// worker publishes (Outputs, Handler, DeadLetter, Raw), and tells its process
// of each transition. It is a value handed to the gates, not process-wide
// state: two pipelines in one process each have their own. A nil *Emitter
// (or a zero one) has no hooks and the default max payload, which is fine
// for tests.
type Emitter struct {
	// Transition is told of every envelope Outputs turns into messages:
	// one transition of one call at stage. It counts and logs; it must not
	// block.
	Transition func(stage string, e call.Envelope)
	// Sensitive returns a tool's sensitive_fields, so audit events redact
	// them; nil or an unknown tool: the built-in detectors only.
	Sensitive func(tool string) []string
	// Registered reports whether a tool of that name is registered: any
	// other name is written hashed in headers, status records and audit
	// events (redact.ToolName; names.go), in clear only in the dead letter's
	// body and the result. nil: every name as it is (tests of other concerns).
	Registered func(tool string) bool
	// MaxPayload is the max payload of the pipeline's NATS connection
	// (nc.MaxPayload()): results, dead letters, status records and audit
	// events are cut to fit it. 0: DefaultMaxPayload.
	MaxPayload int64
	// Seals seals the pass verdicts of the gates (internal/seal): this
	// process's stages' keys. nil: nothing is sealed (tests of other
	// concerns), and no execute stage will run such a call.
	Seals *seal.Keyring
	// Waits says what a call that stage leaves waiting (not terminal, and
	// for no stage: approval_required) waits for, written into its status
	// record; nil, or a nil Wait: nothing said.
	Waits func(stage string, e call.Envelope) *Wait
	// Notify publishes a display-only notice (core NATS, best effort):
	// a call left waiting (Waits) tells its producer on the response's
	// progress subject (wire.Waiting). It must not block; nil: no notices.
	Notify func(subject string, data []byte)
	// JSONHops writes the envelope to the next gate as JSON instead of the
	// hop encoding (call.Envelope.MarshalHop), for a rollout from a version
	// that reads only JSON (TOOLGATE_HOP_ENCODING=json). Every version
	// since reads both.
	JSONHops bool
	// Lane is the fairness lane of a call of tenant with priority
	// (streams.Fair.LaneFunc): a hop to a laned stage goes to that lane's
	// subject. nil: to the stage's lane-less subject, which its main
	// durable reads.
	Lane func(tenant, priority string) string
	// ExecGroup names the executor group of a registered tool: a call
	// approved for it goes to the group's own subject
	// (streams.ExecuteSubject). nil, or a tool not registered: the legacy
	// execute subject, whose durable ends a call of a tool no longer
	// registered.
	ExecGroup func(tool string) (string, bool)
	// AuditStream publishes each terminal call's audit event on
	// toolgate.audit.<status> as well (--audit-stream), for deployments
	// whose SIEM subscribes there. false: the event rides in the call's
	// result only (Result.Audit), one stored message and two NATS messages
	// fewer per call (issue 30).
	AuditStream bool
	// Partitions is P, the partitions of the gate stages' streams
	// (streams.Partition): a hop to a laned stage or to an executor group
	// goes to its call's partition. 0 or 1: partition 0, the layout
	// without partitions.
	Partitions int
}

// Subject is where a call goes to enter stage next, as a hop from the gate
// before it would send it (a dead-letter replay enters there too).
func (em *Emitter) Subject(next string, e call.Envelope) string { return em.hopSubject(next, e) }

// hopSubject is where a call goes to enter stage next: an approved call to
// its executor group's subject, a hop to a laned stage to its lane's.
func (em *Emitter) hopSubject(next string, e call.Envelope) string {
	if em == nil {
		return streams.Gate(next)
	}
	p := 0
	if em.Partitions > 1 { // a response's calls share one partition
		p = streams.Partition(e.Request.Tenant, e.ResponseID, em.Partitions)
	}
	if next == streams.Execute {
		if em.ExecGroup != nil {
			if g, ok := em.ExecGroup(e.ToolName); ok && streams.ValidGroup(g) {
				lane := streams.ExecuteLane
				if em.Lane != nil { // the group's lane of the call's tenant and priority
					lane = em.Lane(e.Request.Tenant, e.Request.Priority)
				}
				return streams.PartitionExecuteSubject(g, lane, p)
			}
		}
		return streams.Gate(next)
	}
	if !streams.Laned(next) {
		return streams.Gate(next)
	}
	if em.Lane == nil {
		return streams.PartitionGate(next, p)
	}
	return streams.PartitionGateLane(next, em.Lane(e.Request.Tenant, e.Request.Priority), p)
}

// resultsSubject is where e's result goes: its response's results in the
// partition its hops take (streams.ResultsIn; P = 1: streams.Results).
func (em *Emitter) resultsSubject(e call.Envelope) string {
	return em.ResultsSubject(e.Request.Tenant, e.ResponseID)
}

// ResultsSubject is where a result of a call of tenant in response
// responseID goes: the partition of its hops (streams.ResultsIn).
func (em *Emitter) ResultsSubject(tenant, responseID string) string {
	if em == nil {
		return streams.Results(tenant, responseID)
	}
	return streams.ResultsIn(tenant, responseID, em.Partitions)
}

// seal appends stage's seal to e when stage passed it and em seals.
func (em *Emitter) seal(stage string, e *call.Envelope) error {
	if em == nil || em.Seals == nil || !seal.Passes(stage, e.Status) {
		return nil
	}
	return em.Seals.Seal(stage, e)
}

// hopBody is e as the next gate reads it.
func (em *Emitter) hopBody(e *call.Envelope) ([]byte, error) {
	if em != nil && em.JSONHops {
		return e.Marshal()
	}
	return e.MarshalHop(), nil
}

func (em *Emitter) transition(stage string, e call.Envelope) {
	if em != nil && em.Transition != nil {
		em.Transition(stage, e)
	}
}

func (em *Emitter) sensitive(tool string) []string {
	if em == nil || em.Sensitive == nil {
		return nil
	}
	return em.Sensitive(tool)
}

// maxPayload is the max payload of the pipeline's connection.
func (em *Emitter) maxPayload() int64 {
	if em != nil && em.MaxPayload > 0 {
		return em.MaxPayload
	}
	return DefaultMaxPayload
}
