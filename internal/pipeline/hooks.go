package pipeline

import (
	"sync/atomic"

	"github.com/toolgate/toolgate/internal/call"
)

// Hooks are what a process plugs into Outputs, which every stage (the
// accumulate gate included) calls for every transition it emits.
type Hooks struct {
	// Transition is told of every envelope Outputs turns into messages:
	// one transition of one call at stage. It counts and logs; it must not
	// block.
	Transition func(stage string, e call.Envelope)
	// Sensitive returns a tool's sensitive_fields, so audit events redact
	// them; nil or an unknown tool: the built-in detectors only.
	Sensitive func(tool string) []string
	// MaxPayload is the max payload of the process's NATS connection
	// (nc.MaxPayload()): results, dead letters, status records and audit
	// events are cut to fit it. 0: DefaultMaxPayload.
	MaxPayload int64
}

var hooks atomic.Pointer[Hooks]

// SetHooks installs h for the whole process (stage.Run does, once per
// process) and returns a function that puts the previous hooks back. Outputs
// is a plain function called from every gate, so its hooks are process-wide;
// two pipelines in one process share the last hooks installed.
func SetHooks(h Hooks) (restore func()) {
	prev := hooks.Swap(&h)
	return func() { hooks.CompareAndSwap(&h, prev) }
}

func current() Hooks {
	if h := hooks.Load(); h != nil {
		return *h
	}
	return Hooks{}
}

func (h Hooks) transition(stage string, e call.Envelope) {
	if h.Transition != nil {
		h.Transition(stage, e)
	}
}

func (h Hooks) sensitive(tool string) []string {
	if h.Sensitive == nil {
		return nil
	}
	return h.Sensitive(tool)
}
