package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrNoCallID is returned when a provider that pairs results with calls by
// id (OpenAI, Anthropic) gets an outcome with neither ProviderCallID nor
// CallID.
var ErrNoCallID = errors.New("result: the call has no id to answer (neither ProviderCallID nor CallID is set)")

// ErrNoToolName is returned when a provider that pairs results with calls by
// name (Gemini) gets an outcome without Tool.
var ErrNoToolName = errors.New("result: the call has no tool name to answer (Tool is empty)")

// Message returns the tool-result item for one outcome, ready to append to
// the conversation in the provider's own format. The id is ProviderCallID,
// or CallID when the call had none.
//
//   - openai-chat (and any unknown provider):
//     {"role":"tool","tool_call_id":id,"content":Text}
//   - openai-responses: {"type":"function_call_output","call_id":id,"output":Text}
//   - anthropic: the content block
//     {"type":"tool_result","tool_use_id":id,"content":Text,"is_error":!OK};
//     all results of one response belong in ONE user message, so Message
//     returns the block and Turn wraps the blocks in {"role":"user","content":[...]}.
//   - gemini: the part {"functionResponse":{"name":Tool,"id":ProviderCallID,"response":{...}}}
//     with response {"output":result} when OK and {"error":Text} otherwise
//     (the keys Gemini documents); "id" only when the call had one. Turn
//     wraps the parts in {"role":"user","parts":[...]}.
//   - ollama: {"role":"tool","tool_name":Tool,"content":Text}, plus
//     "tool_call_id" when the call had a provider id.
//
// Neither OpenAI API nor Ollama has an error flag on a tool result: there the
// failure is carried by Text, which starts with "Error: ".
func Message(o Outcome) (json.RawMessage, error) {
	switch o.Provider {
	case ProviderOpenAIResponses:
		id, err := requireID(o)
		if err != nil {
			return nil, err
		}
		return marshal(responsesOutput{Type: "function_call_output", CallID: id, Output: Text(o)})
	case ProviderAnthropic:
		id, err := requireID(o)
		if err != nil {
			return nil, err
		}
		return marshal(anthropicToolResult{Type: "tool_result", ToolUseID: id, Content: Text(o), IsError: !o.OK})
	case ProviderGemini:
		if o.Tool == "" {
			return nil, ErrNoToolName
		}
		return marshal(geminiPart{FunctionResponse: geminiFunctionResponse{
			Name:     o.Tool,
			ID:       o.ProviderCallID,
			Response: geminiResponse(o),
		}})
	case ProviderOllama:
		return marshal(ollamaMessage{Role: "tool", ToolName: o.Tool, ToolCallID: o.ProviderCallID, Content: Text(o)})
	default:
		id, err := requireID(o)
		if err != nil {
			return nil, err
		}
		return marshal(chatMessage{Role: "tool", ToolCallID: id, Content: Text(o)})
	}
}

type chatMessage struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

type responsesOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type anthropicToolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error"`
}

type geminiPart struct {
	FunctionResponse geminiFunctionResponse `json:"functionResponse"`
}

type geminiFunctionResponse struct {
	Name     string         `json:"name"`
	ID       string         `json:"id,omitempty"`
	Response map[string]any `json:"response"`
}

type ollamaMessage struct {
	Role       string `json:"role"`
	ToolName   string `json:"tool_name"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	Content    string `json:"content"`
}

// geminiResponse builds functionResponse.response, which Gemini requires to
// be an object: "output" for the function's output, "error" for failures.
func geminiResponse(o Outcome) map[string]any {
	if !o.OK {
		return map[string]any{"error": Text(o)}
	}
	if _, cut := IsCut(o.Result); cut || o.Status == statusDryRun {
		return map[string]any{"output": Text(o)}
	}
	trimmed := bytes.TrimSpace(o.Result)
	switch {
	case len(trimmed) == 0:
		return map[string]any{"output": Text(o)}
	case json.Valid(trimmed):
		return map[string]any{"output": json.RawMessage(trimmed)}
	default:
		return map[string]any{"output": string(trimmed)}
	}
}

func requireID(o Outcome) (string, error) {
	id := o.callID()
	if id == "" {
		return "", ErrNoCallID
	}
	return id, nil
}

// marshal encodes without HTML escaping, so results keep "<", ">" and "&"
// as the executor wrote them.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("result: encode tool result: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
