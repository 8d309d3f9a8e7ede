// Package streams declares toolgate's subjects, streams, consumers and
// key-value buckets as data, and applies them idempotently with Ensure.
// Subjects are built here and nowhere else.
package streams

import (
	"strconv"

	"github.com/toolgate/toolgate/pkg/wire"
)

// The stages, in pipeline order. Each is a durable consumer name too, and a
// durable's name never changes: renaming one makes JetStream redeliver
// everything.
const (
	Accumulate = "accumulate"
	Parse      = "parse"
	Validate   = "validate"
	Business   = "business"
	Policy     = "policy"
	Repair     = "repair"
	Execute    = "execute"
)

// AccumulateTimer is the durable consumer (and subject token) of the
// accumulate gate's idle timers for open streams. It is part of the
// accumulate stage, not a stage of its own.
const AccumulateTimer = "accumulate_timer"

// Public subjects (README.md, "Public contract").
const (
	SubjectInResponse = wire.SubjectInResponse
	subjectInStream   = wire.InStreamPrefix
	subjectResults    = wire.ResultsPrefix
	subjectDLQ        = "toolgate.dlq."
	subjectExec       = wire.ExecPrefix
	subjectProgress   = wire.ProgressPrefix
	subjectAudit      = "toolgate.audit."
	subjectGate       = "toolgate.gate."
)

// Headers on ingest and internal messages: pkg/wire's, the one list.
const (
	HeaderProvider     = wire.HeaderProvider
	HeaderResponseID   = wire.HeaderResponseID
	HeaderTenant       = wire.HeaderTenant
	HeaderPrincipal    = wire.HeaderPrincipal
	HeaderRoles        = wire.HeaderRoles
	HeaderConversation = wire.HeaderConversation
	HeaderModel        = wire.HeaderModel
	HeaderTolerant     = wire.HeaderTolerant
	HeaderDryRun       = wire.HeaderDryRun
	HeaderAtomic       = wire.HeaderAtomic
	HeaderMaxTokens    = wire.HeaderMaxTokens
	HeaderSeq          = wire.HeaderSeq
	HeaderEnd          = wire.HeaderEnd
	HeaderCallID       = wire.HeaderCallID
	HeaderIdemKey      = wire.HeaderIdemKey
	HeaderStage        = wire.HeaderStage
	HeaderFailure      = wire.HeaderFailure
	HeaderError        = wire.HeaderError
	HeaderStatus       = wire.HeaderStatus
	HeaderTool         = wire.HeaderTool
	HeaderOrigSubject  = wire.HeaderOrigSubject
	HeaderReplay       = wire.HeaderReplay
	HeaderPriority     = wire.HeaderPriority
)

// InStreamPrefix starts every stream event subject; the response id follows.
const InStreamPrefix = subjectInStream

// InStream is the subject of one provider stream's events.
func InStream(responseID string) string { return subjectInStream + responseID }

// InTenantResponse is where tenant's producer publishes whole responses
// (wire.InTenantResponse); only that tenant's producer user may, and
// accumulate takes the tenant from the subject.
func InTenantResponse(tenant string) string { return wire.InTenantResponse(tenant) }

// InTenantStream is the subject of one of tenant's provider streams
// (wire.InTenantStream): its events are that tenant's alone.
func InTenantStream(tenant, responseID string) string {
	return wire.InTenantStream(tenant, responseID)
}

// InTenantResponses matches the whole responses of every tenant
// (wire.InTenantResponse).
func InTenantResponses() string { return wire.InTenantPrefix + "*.response" }

// InTenantBatch is where tenant's producer publishes whole responses of
// priority batch (wire.InTenantBatch): accumulate's lanes read them apart
// from the tenant's interactive ones.
func InTenantBatch(tenant string) string { return wire.InTenantBatch(tenant) }

// InTenantBatches matches the batch responses of every tenant
// (wire.InTenantBatch).
func InTenantBatches() string { return wire.InTenantPrefix + "*." + wire.InTenantBatchRest }

// InTenantStreams matches the stream events of every tenant
// (wire.InTenantStream); accumulate reads a stream back on its own subject.
func InTenantStreams() string { return wire.InTenantPrefix + "*.stream.>" }

// Gate is the internal input subject of a stage after accumulate.
func Gate(stage string) string { return subjectGate + stage }

// Results is where every terminal outcome of a response's calls goes
// (wire.Results: toolgate.results.<tenant>.<response-id>).
func Results(tenant, responseID string) string { return wire.Results(tenant, responseID) }

// ResultsOf matches the results of one response whatever its tenant, for
// operators' tools that know only the response id.
func ResultsOf(responseID string) string { return subjectResults + "*." + responseID }

// ResultsAll matches every result.
func ResultsAll() string { return subjectResults + ">" }

// DLQ is the dead-letter subject for a failure at a stage.
func DLQ(stage, failure string) string { return subjectDLQ + stage + "." + failure }

// Exec is the default NATS request/reply subject of a tool's executor.
func Exec(tool string) string { return subjectExec + tool }

// Progress carries stream progress events for a UI; nothing executes from it.
func Progress(tenant, responseID string) string { return wire.Progress(tenant, responseID) }

// ProgressAll matches every progress event.
func ProgressAll() string { return subjectProgress + ">" }

// Audit carries one audit event per terminal outcome with --audit-stream (by default the event rides in the result).
func Audit(status string) string { return subjectAudit + status }

// CallStatus is the key-value subject of a call's status record: publishing
// to it is a put into the calls bucket, so the record rides along with a
// stage's other asynchronous publishes.
func CallStatus(callID string) string { return "$KV." + BucketCalls + "." + callID }

// ResponseDone is the key-value subject of a streamed response's "assembled"
// mark: publishing to it is a put into the responses bucket.
func ResponseDone(responseID string) string { return "$KV." + BucketResponses + "." + responseID }

// BatchKey is the key, in the batches bucket, of one mark of a call of a
// batch: kind "tool" (its tool name, at accumulate), "passed" (it reached
// execute), "failed" (it ended with a failure); index is the call's place.
func BatchKey(batchID, kind string, index int) string {
	return batchID + "." + kind + "." + strconv.Itoa(index)
}

// BatchDecisionKey is the key of an atomic batch's one decision: run all, or
// abort all.
func BatchDecisionKey(batchID string) string { return batchID + ".decision" }

// BatchMark is the key-value subject of a batch mark: publishing to it is a
// put into the batches bucket.
func BatchMark(batchID, kind string, index int) string {
	return "$KV." + BucketBatches + "." + BatchKey(batchID, kind, index)
}

// TimerSubject carries the accumulate gate's idle timers, one per open
// stream.
func TimerSubject() string { return Gate(AccumulateTimer) }

// ExecReplayKeys is the subject of every record of tool in the executors'
// replay bucket (BucketExecReplay): keys <tool>.<key>.
func ExecReplayKeys(tool string) string { return "$KV." + BucketExecReplay + "." + tool + ".*" }
