package stage

import (
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/pkg/call"
	"github.com/toolgate/toolgate/pkg/metrics"
	"github.com/toolgate/toolgate/pkg/registry"
)

// transitionHook counts a transition and logs it: one line per transition
// with call id, stage and status (info; warn for an outcome that is not ok).
// The raw arguments never reach the log, only their place in the calls
// bucket and the dead-letter stream.
func transitionHook(m *metrics.Metrics, log zerolog.Logger) func(string, call.Envelope) {
	return func(stage string, e call.Envelope) {
		m.Transition(stage, e)
		ev := log.Info()
		if e.Status.Terminal() && !e.Status.OK() {
			ev = log.Warn()
		}
		if !ev.Enabled() {
			return
		}
		ev = ev.Str("call_id", e.CallID).Str("stage", stage).Str("status", string(e.Status)).Str("tool", e.ToolName).Str("provider", e.Provider)
		if e.Failure != "" {
			ev = ev.Str("failure", string(e.Failure))
		}
		if e.RepairAttempts > 0 {
			ev = ev.Int("repair_attempts", e.RepairAttempts)
		}
		if e.Replays > 0 {
			ev = ev.Int("replays", e.Replays)
		}
		if len(e.Errors) > 0 {
			ev = ev.Int("errors", len(e.Errors))
		}
		ev.Msg("transition")
	}
}

// sensitiveOf returns the registered tool's sensitive_fields, for audit
// redaction.
func sensitiveOf(reg *registry.Registry) func(string) []string {
	return func(tool string) []string {
		if t, ok := reg.Lookup(tool); ok {
			return t.Def.Sensitive
		}
		return nil
	}
}
