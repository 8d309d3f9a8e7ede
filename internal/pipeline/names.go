package pipeline

import (
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
)

// toolName is how e's tool name leaves the process in headers, status
// records and audit events: a registered tool's as it is, any other hashed
// (redact.ToolName). The dead letter's body keeps the name itself (the
// operator's evidence), and the result keeps it too: it goes back to the
// producer who sent it, and tells the model which of its calls named no tool.
func (em *Emitter) toolName(name string) string {
	if em == nil || em.Registered == nil {
		return name
	}
	return redact.ToolName(name, em.Registered)
}

// public is e as status records and audit events show it: an unregistered
// tool name hashed in its tool name, its errors and its history notes
// ("there is no tool named ..."). e itself is not changed.
func (em *Emitter) public(e call.Envelope) call.Envelope {
	name := e.ToolName
	pub := em.toolName(name)
	if pub == name {
		return e
	}
	e.ToolName = pub
	if len(e.Errors) > 0 {
		errs := make([]string, len(e.Errors))
		for i, s := range e.Errors {
			errs[i] = redact.ToolNameIn(s, name, pub)
		}
		e.Errors = errs
	}
	hist := make([]call.Step, len(e.History))
	for i, h := range e.History {
		h.Note = redact.ToolNameIn(h.Note, name, pub)
		hist[i] = h
	}
	e.History = hist
	return e
}

// InFlightOf is the status record of a call in flight, read from the hop
// it waits in (internal/inflight): no record is written when a call enters
// (issue 30, WritesStatus). shown is the tool name as the hop's header
// carries it (the name itself for a registered tool, its hash for any
// other), so the record shows the name as a stored one would.
func InFlightOf(e call.Envelope, shown string) StatusRecord {
	em := &Emitter{Registered: func(n string) bool { return n == shown }}
	return StatusOf(em.public(e))
}
