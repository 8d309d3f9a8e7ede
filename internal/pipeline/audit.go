package pipeline

import (
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// Audit event types: one event per terminal outcome of a call.
const (
	EventFailed   = "tool_call_failed"   // every outcome that is not ok
	EventExecuted = "tool_call_executed" // the executor ran it and answered ok
	EventDryRun   = "tool_call_dry_run"  // every gate passed; nothing ran by request
)

// AuditEvent is a call's audit event (wire.AuditEvent, the public
// contract): the seed's ToolCallFailureEvent in snake_case (like every
// toolgate message), for failures and successes alike. It rides in the
// call's result (Result.Audit), and on toolgate.audit.<status> too with
// Emitter.AuditStream. It never holds the raw arguments: their sha256 and a
// redacted copy only. FailureType uses toolgate's class names
// (schema_invalid where the seed says invalid_schema).
type AuditEvent = wire.AuditEvent

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
