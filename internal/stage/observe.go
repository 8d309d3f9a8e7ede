package stage

import (
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/registry"
)

// transitionHook counts a transition and logs it: one line per transition
// with call id, stage and status (info; warn for an outcome that is not ok).
// The raw arguments never reach the log, only their place in the calls
// bucket and the dead-letter stream.
func transitionHook(m *metrics.Metrics, log zerolog.Logger, reg *registry.Registry) func(string, call.Envelope) {
	return func(stage string, e call.Envelope) {
		tool := toolName(reg, e.ToolName)
		e.Provider = providerLabel(e.Provider)
		labelled := e
		if tool != e.ToolName {
			labelled.ToolName = "unregistered" // one label value for every unknown name
		}
		m.Transition(stage, labelled)
		e.ToolName = tool
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

// toolName is how a tool name appears in log lines (redact.ToolName): a
// registered tool's name as it is, any other as "unregistered:" and 12 hex
// digits of its sha256. Metrics label all of those "unregistered", so the
// label set is bounded by the registered tools.
func toolName(reg *registry.Registry, name string) string {
	return redact.ToolName(name, registeredIn(reg))
}

// execGroupIn names the executor group of a tool registered in reg.
func execGroupIn(reg *registry.Registry) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if reg == nil {
			return "", false
		}
		t, ok := reg.Lookup(name)
		if !ok {
			return "", false
		}
		return t.Def.Group(), true
	}
}

// registeredIn reports whether a tool of that name is registered in reg.
func registeredIn(reg *registry.Registry) func(string) bool {
	return func(name string) bool {
		if reg == nil {
			return false
		}
		_, ok := reg.Lookup(name)
		return ok
	}
}

// providerLabel bounds the provider label the same way: a known provider's
// name, or "unknown".
func providerLabel(p string) string {
	if p == "" || provider.Known(p) {
		return p
	}
	return "unknown"
}
