package provider

import (
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
)

// Ollama is the provider name of Ollama's native /api/chat.
const Ollama = "ollama"

// Ollama native /api/chat, whole (stream:false) and NDJSON-streamed. Calls
// arrive whole in message.tool_calls with arguments as an object; a stream
// line may carry some calls and the final line ("done": true) the reason.
// done_reason is "stop" even with calls, so stop with calls is tool_calls.
// Ollama's OpenAI-compatible /v1 endpoint is openai-chat, not this.

type ollamaLine struct {
	Model   string `json:"model"`
	Message *struct {
		Content   wireString `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string         `json:"name"`
				Arguments jsontext.Value `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"message"`
	Done       *bool          `json:"done"`
	DoneReason string         `json:"done_reason"`
	EvalCount  int            `json:"eval_count"`
	Error      jsontext.Value `json:"error"`
}

var errOllamaShape = errors.New("provider: ollama: not an /api/chat response: expected message, done or error")

func ollamaWhole(body []byte, s *state) error { return ollamaEvent(body, s) }

func ollamaEvent(ev []byte, s *state) error {
	var l ollamaLine
	if err := unmarshal(Ollama, ev, &l); err != nil {
		return err
	}
	if l.Message == nil && l.Done == nil && len(l.Error) == 0 {
		return errOllamaShape
	}
	if s.done {
		return ErrAfterTerminal
	}
	if l.Message != nil {
		for _, tc := range l.Message.ToolCalls { // reject before changing anything
			if err := argsKind(tc.Function.Arguments); err != nil {
				return fmt.Errorf("provider: ollama: %w", err)
			}
		}
	}
	if l.Model != "" {
		s.model = l.Model
	}
	if e := decodeError(l.Error); e != nil {
		s.setError(e)
		return nil
	}
	if m := l.Message; m != nil {
		s.text.WriteString(string(m.Content))
		for _, tc := range m.ToolCalls {
			c := s.newCall(len(s.calls))
			c.id, c.name = tc.ID, tc.Function.Name
			if err := c.addChatArgs(tc.Function.Arguments); err != nil {
				return fmt.Errorf("provider: ollama: tool call %s: %w", tc.Function.Name, err)
			}
		}
	}
	if l.EvalCount > 0 {
		s.outputTokens = l.EvalCount
	}
	if l.Done != nil && *l.Done {
		s.finish, s.providerFinish, s.done = ollamaReason(l.DoneReason), l.DoneReason, true
	}
	return nil
}

// ollamaToolResult: {"role":"tool","tool_name":Tool,"content":Text}, plus
// "tool_call_id" when the call had a provider id. Ollama has no error flag:
// a failure is carried by Text.
func ollamaToolResult(a Answer) (json.RawMessage, error) {
	return marshalResult(struct {
		Role       string `json:"role"`
		ToolName   string `json:"tool_name"`
		ToolCallID string `json:"tool_call_id,omitempty"`
		Content    string `json:"content"`
	}{"tool", a.Tool, a.ProviderCallID, a.Text})
}
