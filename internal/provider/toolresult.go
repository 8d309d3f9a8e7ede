package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Answer is what a tool-result item says about one call, already phrased:
// package result decides the wording, the provider's codec the shape.
type Answer struct {
	// ID is the provider's id of the call, or toolgate's when it had none;
	// "" when neither is known.
	ID string
	// ProviderCallID is the provider's own id ("" when none).
	ProviderCallID string
	// Tool is the tool name as the model wrote it.
	Tool string
	// Text is the outcome phrased for the model.
	Text string
	// OK is true when the call ran successfully (or passed a dry run).
	OK bool
	// Result is the executor's result when OK, for providers that hand a
	// value back (Gemini); TextOnly says Text stands in for it (a cut result,
	// a dry run).
	Result   json.RawMessage
	TextOnly bool
	// Kind is the call's provider.Call.Kind: the OpenAI Responses item type
	// it answers ("" for a function call, and for every other provider).
	Kind string
}

// Errors of a tool result that cannot be built.
var (
	// ErrNoCallID: the provider pairs results with calls by id (OpenAI,
	// Anthropic), and the answer has none.
	ErrNoCallID = errors.New("provider: the call has no id to answer")
	// ErrNoToolName: the provider pairs results with calls by name (Gemini),
	// and the answer has none.
	ErrNoToolName = errors.New("provider: the call has no tool name to answer")
)

// ToolResult returns the tool-result item answering one call of provider
// name, in that provider's own format; an unknown or empty name gets the
// OpenAI Chat shape. JSON is encoded without HTML escaping, so results keep
// "<", ">" and "&" as the executor wrote them.
func ToolResult(name string, a Answer) (json.RawMessage, error) {
	c, ok := lookup(name)
	if !ok {
		c, _ = lookup(OpenAIChat)
	}
	return c.toolResult(a)
}

// requireID returns the answer's id, or ErrNoCallID.
func (a Answer) requireID() (string, error) {
	if a.ID == "" {
		return "", ErrNoCallID
	}
	return a.ID, nil
}

// marshalResult encodes without HTML escaping.
func marshalResult(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("provider: encode tool result: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
