package wire

import "time"

// AuditEvent is a call's audit event: one per terminal outcome, for
// failures and successes alike, the long-term record of what was decided.
// It rides in the call's Result (Result.Audit: one stored message ends a
// call, issue 30) and, with the stages' --audit-stream option (or from a
// toolgate that predates the fold), on toolgate.audit.<status> as well. It
// never holds the raw arguments: their sha256 and a redacted copy only
// (sensitive fields and secret-like values masked; cut when large).
// FailureType uses toolgate's class names (schema_invalid).
type AuditEvent struct {
	EventType            string    `json:"event_type"` // tool_call_failed, tool_call_executed, tool_call_dry_run, ...
	TraceID              string    `json:"trace_id"`   // the response id: every call of one response shares it
	Provider             string    `json:"provider"`
	ModelID              string    `json:"model_id,omitempty"`
	CallID               string    `json:"call_id"`
	ResponseID           string    `json:"response_id"`
	ToolName             string    `json:"tool_name"`
	FinishReason         string    `json:"finish_reason,omitempty"`
	RawArgumentsHash     string    `json:"raw_arguments_hash"`
	RawArgumentsRedacted string    `json:"raw_arguments_redacted,omitempty"`
	Status               Status    `json:"status"`
	FailureType          string    `json:"failure_type,omitempty"`
	Stage                string    `json:"stage"` // the stage that decided the outcome
	Errors               []string  `json:"errors,omitempty"`
	RepairAttempts       int       `json:"repair_attempts"`
	Replays              int       `json:"replays,omitempty"`
	ToolRevision         uint64    `json:"tool_revision,omitempty"`
	Tenant               string    `json:"tenant,omitempty"`
	Principal            string    `json:"principal,omitempty"`
	Identity             string    `json:"identity"` // verified, asserted or unverified
	OccurredAt           time.Time `json:"occurred_at"`
}
