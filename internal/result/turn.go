package result

import (
	"encoding/json"
	"fmt"
)

// Turn returns the messages that answer all tool calls of one model
// response, in order, ready to append to the conversation.
//
// Anthropic and Gemini expect every result of one response in a single
// message: Turn returns one {"role":"user","content":[tool_result...]}
// (Anthropic) or one {"role":"user","parts":[functionResponse...]} (Gemini).
// The other providers get one message per outcome, as Message builds it.
// All outcomes must name the same provider; an empty list yields no
// messages.
func Turn(outcomes []Outcome) ([]json.RawMessage, error) {
	if len(outcomes) == 0 {
		return nil, nil
	}
	provider := outcomes[0].Provider
	items := make([]json.RawMessage, 0, len(outcomes))
	for i, o := range outcomes {
		if o.Provider != provider {
			return nil, fmt.Errorf("result: outcome %d is for provider %q, but outcome 0 is for %q: one turn answers one response", i, o.Provider, provider)
		}
		m, err := Message(o)
		if err != nil {
			return nil, fmt.Errorf("result: outcome %d (call %s): %w", i, o.CallID, err)
		}
		items = append(items, m)
	}
	switch provider {
	case ProviderAnthropic:
		m, err := marshal(struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		}{"user", items})
		if err != nil {
			return nil, err
		}
		return []json.RawMessage{m}, nil
	case ProviderGemini:
		m, err := marshal(struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		}{"user", items})
		if err != nil {
			return nil, err
		}
		return []json.RawMessage{m}, nil
	}
	return items, nil
}
