package pipeline

import (
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/streams"
)

// Audit event types: one event per terminal outcome of a call.
const (
	EventFailed   = "tool_call_failed"   // every outcome that is not ok
	EventExecuted = "tool_call_executed" // the executor ran it and answered ok
	EventDryRun   = "tool_call_dry_run"  // every gate passed; nothing ran by request
)

// AuditEvent is what toolgate.audit.<status> carries: the seed's
// ToolCallFailureEvent in snake_case (like every toolgate message), for
// failures and successes alike, so the audit stream is the complete
// long-term record. It never holds the raw arguments: their sha256 and a
// redacted copy only. FailureType uses toolgate's class names
// (schema_invalid where the seed says invalid_schema).
type AuditEvent struct {
	EventType            string      `json:"event_type"`
	TraceID              string      `json:"trace_id"` // the response id: every call of one response shares it
	Provider             string      `json:"provider"`
	ModelID              string      `json:"model_id,omitempty"`
	CallID               string      `json:"call_id"`
	ResponseID           string      `json:"response_id"`
	ToolName             string      `json:"tool_name"`
	FinishReason         string      `json:"finish_reason,omitempty"`
	RawArgumentsHash     string      `json:"raw_arguments_hash"`
	RawArgumentsRedacted string      `json:"raw_arguments_redacted,omitempty"`
	Status               call.Status `json:"status"`
	FailureType          string      `json:"failure_type,omitempty"`
	Stage                string      `json:"stage"` // the stage that decided the outcome
	Errors               []string    `json:"errors,omitempty"`
	RepairAttempts       int         `json:"repair_attempts"`
	Replays              int         `json:"replays,omitempty"`
	ToolRevision         uint64      `json:"tool_revision,omitempty"`
	Tenant               string      `json:"tenant,omitempty"`
	Principal            string      `json:"principal,omitempty"`
	Identity             string      `json:"identity"` // verified or unverified (IdentityOf)
	OccurredAt           time.Time   `json:"occurred_at"`
}

// AuditOf builds the audit event of a terminal envelope emitted by stage.
// sensitive are the tool's sensitive_fields; errors go through redact.Text
// since they quote arguments (a schema error names the bad value).
func AuditOf(stage string, e call.Envelope, sensitive []string) AuditEvent {
	ev := AuditEvent{
		EventType: EventFailed, TraceID: e.ResponseID, Provider: e.Provider, ModelID: e.Model,
		CallID: e.CallID, ResponseID: e.ResponseID, ToolName: e.ToolName, FinishReason: e.FinishReason,
		RawArgumentsHash: redact.Hash([]byte(e.RawArguments)), Status: e.Status, Stage: stage,
		RepairAttempts: e.RepairAttempts, Replays: e.Replays, ToolRevision: e.ToolRevision,
		Tenant: e.Request.Tenant, Principal: e.Request.Principal, Identity: IdentityOf(e),
		OccurredAt: time.Now().UTC(),
	}
	if e.RawArguments != "" {
		ev.RawArgumentsRedacted = redact.Arguments([]byte(e.RawArguments), redact.Options{SensitiveFields: sensitive})
	}
	if n := len(e.History); n > 0 {
		ev.OccurredAt = e.History[n-1].At
	}
	switch e.Status {
	case call.Executed:
		ev.EventType = EventExecuted
	case call.DryRun:
		ev.EventType = EventDryRun
	default:
		if e.Status.OK() {
			ev.EventType = "tool_call_" + string(e.Status)
		} else {
			_, ev.FailureType = streams.FailedAt(e)
		}
	}
	for _, s := range e.Errors {
		ev.Errors = append(ev.Errors, redact.Text(s))
	}
	return ev
}
