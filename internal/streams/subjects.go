// Package streams declares toolgate's subjects, streams, consumers and
// key-value buckets as data, and applies them idempotently with Ensure.
// Subjects are built here and nowhere else.
package streams

import "strconv"

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
	SubjectInResponse = "toolgate.in.response"
	subjectInStream   = "toolgate.in.stream."
	subjectInAll      = "toolgate.in.>"
	subjectResults    = "toolgate.results."
	subjectDLQ        = "toolgate.dlq."
	subjectExec       = "toolgate.exec."
	subjectProgress   = "toolgate.progress."
	subjectAudit      = "toolgate.audit."
	subjectGate       = "toolgate.gate."
)

// Headers on ingest and internal messages.
const (
	HeaderProvider     = "Toolgate-Provider"
	HeaderResponseID   = "Toolgate-Response-Id"
	HeaderTenant       = "Toolgate-Tenant"
	HeaderPrincipal    = "Toolgate-Principal"
	HeaderRoles        = "Toolgate-Roles"
	HeaderConversation = "Toolgate-Conversation"
	HeaderModel        = "Toolgate-Model"
	HeaderTolerant     = "Toolgate-Tolerant"
	HeaderDryRun       = "Toolgate-Dry-Run"
	HeaderAtomic       = "Toolgate-Atomic"
	HeaderMaxTokens    = "Toolgate-Max-Tokens" // the request's output token cap, to spot silent truncation
	HeaderSeq          = "Toolgate-Seq"
	HeaderEnd          = "Toolgate-End"
	HeaderCallID       = "Toolgate-Call-Id"
	HeaderIdemKey      = "Toolgate-Idempotency-Key"
	HeaderStage        = "Toolgate-Stage"
	HeaderFailure      = "Toolgate-Failure"
	HeaderError        = "Toolgate-Error"
	HeaderStatus       = "Toolgate-Status"
	HeaderTool         = "Toolgate-Tool"
	HeaderOrigSubject  = "Toolgate-Original-Subject"
	HeaderReplay       = "Toolgate-Replay"
)

// InStreamPrefix starts every stream event subject; the response id follows.
const InStreamPrefix = subjectInStream

// InStream is the subject of one provider stream's events.
func InStream(responseID string) string { return subjectInStream + responseID }

// Gate is the internal input subject of a stage after accumulate.
func Gate(stage string) string { return subjectGate + stage }

// Results is where every terminal outcome of a response's calls goes.
func Results(responseID string) string { return subjectResults + responseID }

// ResultsAll matches every result.
func ResultsAll() string { return subjectResults + ">" }

// DLQ is the dead-letter subject for a failure at a stage.
func DLQ(stage, failure string) string { return subjectDLQ + stage + "." + failure }

// Exec is the default NATS request/reply subject of a tool's executor.
func Exec(tool string) string { return subjectExec + tool }

// Progress carries stream progress events for a UI; nothing executes from it.
func Progress(responseID string) string { return subjectProgress + responseID }

// Audit carries one audit event per terminal outcome.
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
