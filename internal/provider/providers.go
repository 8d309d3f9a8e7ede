package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// codec is one provider's wire format: whole decodes a complete body, event
// one stream event (both write into the shared state), and toolResult builds
// the tool-result item that answers one of its calls.
type codec struct {
	name  string
	whole func(body []byte, s *state) error
	event func(ev []byte, s *state) error
	// stopMeansCalls: the provider says "stop" even when it returns calls, so
	// stop with calls is normalized to tool_calls.
	stopMeansCalls bool
	toolResult     func(a Answer) (json.RawMessage, error)
}

// providers is the one list of providers, in the order help texts and error
// messages name them. Adding a provider is its codec file, one row here, and
// its fixtures.
func providers() []codec {
	return []codec{
		{name: OpenAIChat, whole: chatWhole, event: chatEvent, stopMeansCalls: true, toolResult: chatToolResult},
		{name: OpenAIResponses, whole: respWhole, event: respEvent, stopMeansCalls: true, toolResult: respToolResult},
		{name: Anthropic, whole: anthWhole, event: anthEvent, toolResult: anthToolResult},
		{name: Gemini, whole: gemWhole, event: gemEvent, stopMeansCalls: true, toolResult: gemToolResult},
		{name: Ollama, whole: ollamaWhole, event: ollamaEvent, stopMeansCalls: true, toolResult: ollamaToolResult},
		{name: BedrockConverse, whole: bedrockWhole, event: bedrockStreamEvent, toolResult: bedrockToolResult},
		{name: Cohere, whole: cohereWhole, event: cohereStreamEvent, toolResult: cohereToolResult},
		{name: GeminiInteractions, whole: interWhole, event: interEventFn, stopMeansCalls: true, toolResult: interToolResult},
	}
}

// lookup returns the codec of a provider name.
func lookup(name string) (codec, bool) {
	for _, c := range providers() {
		if c.name == name {
			return c, true
		}
	}
	return codec{}, false
}

// Names lists every provider name toolgate reads, as sent in the
// Toolgate-Provider header, in the order help texts and error messages give
// them. The caller owns the returned slice.
func Names() []string {
	ps := providers()
	names := make([]string, len(ps))
	for i, c := range ps {
		names[i] = c.name
	}
	return names
}

// Known reports whether name is one of Names.
func Known(name string) bool {
	_, ok := lookup(name)
	return ok
}

// ErrUnknownProvider matches (errors.Is) every UnknownError.
var ErrUnknownProvider = errors.New("provider: unknown provider")

// UnknownError is returned for a provider name Known rejects; its text lists
// the names toolgate reads.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	names := Names()
	list := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return fmt.Sprintf("provider: unknown provider (use %s): %q", list, e.Name)
}

// Is makes errors.Is(err, ErrUnknownProvider) hold.
func (e *UnknownError) Is(target error) bool { return target == ErrUnknownProvider }
