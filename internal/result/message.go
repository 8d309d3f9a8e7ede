package result

import (
	"encoding/json"
	"errors"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/pkg/wire"
)

// ErrNoCallID is returned when a provider that pairs results with calls by
// id (OpenAI, Anthropic) gets an outcome with neither ProviderCallID nor
// CallID.
var ErrNoCallID = errors.New("result: the call has no id to answer (neither ProviderCallID nor CallID is set)")

// ErrNoToolName is returned when a provider that pairs results with calls by
// name (Gemini) gets an outcome without Tool.
var ErrNoToolName = errors.New("result: the call has no tool name to answer (Tool is empty)")

// Message returns the tool-result item for one outcome, ready to append to
// the conversation in the provider's own format (provider.ToolResult: each
// provider's codec file documents its shape; an unknown provider gets the
// OpenAI Chat shape). The id is ProviderCallID, or CallID when the call had
// none. Anthropic and Gemini expect every result of one response in one
// user message: Message returns the block or part, the caller wraps them.
//
// Neither OpenAI API nor Ollama has an error flag on a tool result: there the
// failure is carried by Text, which starts with "Error: ".
func Message(o Outcome) (json.RawMessage, error) {
	_, cut := IsCut(o.Result)
	m, err := provider.ToolResult(o.Provider, provider.Answer{
		ID: o.callID(), ProviderCallID: o.ProviderCallID, Tool: o.Tool, Text: Text(o), OK: o.OK,
		Result: o.Result, TextOnly: cut || o.Status == string(wire.DryRun), Kind: o.Kind,
	})
	switch {
	case errors.Is(err, provider.ErrNoCallID):
		return nil, ErrNoCallID
	case errors.Is(err, provider.ErrNoToolName):
		return nil, ErrNoToolName
	}
	return m, err
}
