// Package result turns the terminal outcome of one tool call into the
// tool-result message handed back to the model, in the provider's own wire
// format (each provider's shape lives with its codec in package provider),
// with the outcome phrased for a model: what failed and what to change.
//
// The package is pure: no I/O, no NATS, no Redis.
package result

import "encoding/json"

// Outcome is what happened to one call, as the gates decided it.
//
// OK decides whether the call succeeded (and so whether a provider's error
// flag is set); Status picks the wording of the text.
type Outcome struct {
	// Provider is one of provider.Names(); an unknown or empty provider
	// gets the OpenAI Chat shape.
	Provider string
	// CallID is toolgate's id of the call; it stands in for ProviderCallID
	// where the provider requires an id and the call had none.
	CallID string
	// ProviderCallID is the provider's id of the call ("" when none: Gemini
	// and Ollama often have none).
	ProviderCallID string
	// Tool is the tool name as the model wrote it (for no_such_tool, the
	// name that does not exist).
	Tool string
	// Status is the terminal status (a wire.Status; for a call that Failed,
	// its failure class), which picks the wording of Text; an unknown
	// status still yields a clear failure text.
	Status string
	// OK is true when the call ran successfully (or passed a dry run).
	OK bool
	// Result is the executor's result when OK (any JSON value; text that is
	// not JSON is passed on as a string). A cut form (see Cut) is named in
	// the text and the message, not repeated.
	Result json.RawMessage
	// Errors lists the problems: schema paths, business problems, reasons.
	Errors []string
	// ValidTools lists the tools the model may call, for no_such_tool.
	ValidTools []string
	// Kind is the provider's item type of a call that is not a plain
	// function call (provider.Call.Kind); its answer is that kind's item.
	Kind string
}

// callID returns the id the provider's tool result must carry: the
// provider's own id when the call had one, else toolgate's.
func (o Outcome) callID() string {
	if o.ProviderCallID != "" {
		return o.ProviderCallID
	}
	return o.CallID
}
