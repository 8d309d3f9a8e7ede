package metrics

import (
	"sync"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/provider"
)

// Unregistered is the tool label of every call naming no registered tool.
const Unregistered = "unregistered"

// known makes every per-tool counter of the registered tools exist at zero
// before its first call, so rate() and increase() see the first one.
type known struct {
	mu    sync.Mutex
	names func() []string
	done  map[string]bool // tools whose series exist
}

// KnownTools has every tool-call counter of each tool names returns (read
// again at each scrape, so tools applied later get theirs), and of
// Unregistered, exist at zero for every provider and outcome it can count.
func (m *Metrics) KnownTools(names func() []string) {
	m.known.mu.Lock()
	defer m.known.mu.Unlock()
	m.known.names, m.known.done = names, map[string]bool{}
}

// touch creates the series of tools not yet seen; Handler calls it before
// each scrape.
func (m *Metrics) touch() {
	m.known.mu.Lock()
	defer m.known.mu.Unlock()
	if m.known.names == nil {
		return
	}
	for _, tool := range append(m.known.names(), Unregistered) {
		if m.known.done[tool] {
			continue
		}
		m.known.done[tool] = true
		for _, prov := range provider.Names() {
			for _, out := range outcomes() {
				m.calls.WithLabelValues(tool, prov, out)
			}
			m.invalidJSON.WithLabelValues(tool, prov, string(call.InvalidJSON))
			m.schemaInvalid.WithLabelValues(tool, prov, string(call.SchemaInvalid))
			m.truncated.WithLabelValues(tool, prov, string(call.Truncated))
			m.execFailed.WithLabelValues(tool, prov, string(call.ExecutionFailed))
			m.repairAttempts.WithLabelValues(tool, prov, string(call.Received))
		}
	}
}

// outcomes are the outcome label values of llm_tool_call_total: every
// terminal status but failed, and the classes a failed call carries
// (Outcome).
func outcomes() []string {
	var out []string
	for _, s := range call.Statuses() {
		if (s.Terminal() && s != call.Failed) || s.Repairable() {
			out = append(out, string(s))
		}
	}
	return out
}
