package provider

import (
	"encoding/json/jsontext"
	"strconv"
	"strings"
)

// Reason is the normalized completion reason of a response.
type Reason string

// The normalized completion reasons.
const (
	ReasonStop          Reason = "stop"
	ReasonToolCalls     Reason = "tool_calls"
	ReasonLength        Reason = "length"
	ReasonContentFilter Reason = "content_filter"
	ReasonRefusal       Reason = "refusal"
	ReasonError         Reason = "error"
	ReasonUnknown       Reason = "unknown"
)

// chatReason maps an OpenAI Chat Completions finish_reason (also used by
// OpenAI-compatible servers).
func chatReason(w string) Reason {
	switch w {
	case "stop", "eos", "end_turn", "stop_sequence":
		return ReasonStop
	case "tool_calls", "function_call", "tool_use":
		return ReasonToolCalls
	case "length", "max_tokens", "model_length":
		return ReasonLength
	case "content_filter":
		return ReasonContentFilter
	case "refusal":
		return ReasonRefusal
	case "error":
		return ReasonError
	}
	return ReasonUnknown
}

// anthReason maps an Anthropic stop_reason.
func anthReason(w string) Reason {
	switch w {
	case "end_turn", "stop_sequence":
		return ReasonStop
	case "tool_use":
		return ReasonToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return ReasonLength
	case "refusal":
		return ReasonRefusal
	}
	return ReasonUnknown // pause_turn and future words
}

// geminiEnum is Gemini's FinishReason enum, for responses requested with
// enum-encoding=int: the name of value n, or false when n is not one.
func geminiEnum(n int) (string, bool) {
	names := [...]string{
		"FINISH_REASON_UNSPECIFIED", "STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER",
		"BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "IMAGE_SAFETY",
		"UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS",
	}
	if n < 0 || n >= len(names) {
		return "", false
	}
	return names[n], true
}

// geminiReason maps a Gemini finishReason given as a name or as its integer.
func geminiReason(w string) Reason {
	if n, err := strconv.Atoi(w); err == nil {
		name, ok := geminiEnum(n)
		if !ok {
			return ReasonUnknown
		}
		w = name
	}
	switch w {
	case "STOP":
		return ReasonStop
	case "MAX_TOKENS":
		return ReasonLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY":
		return ReasonContentFilter
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS":
		return ReasonError
	}
	return ReasonUnknown
}

// ollamaReason maps an Ollama done_reason.
func ollamaReason(w string) Reason {
	switch w {
	case "stop":
		return ReasonStop
	case "length":
		return ReasonLength
	}
	return ReasonUnknown
}

// bedrockReason maps a Bedrock Converse stopReason. A guardrail or content
// filter that stopped the output is content_filter (its calls are withheld,
// bedrock.go); malformed output is error.
func bedrockReason(w string) Reason {
	switch w {
	case "end_turn", "stop_sequence":
		return ReasonStop
	case "tool_use":
		return ReasonToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return ReasonLength
	case "guardrail_intervened", "content_filtered":
		return ReasonContentFilter
	case "malformed_model_output", "malformed_tool_use":
		return ReasonError
	}
	return ReasonUnknown
}

// cohereReason maps a Cohere v2 finish_reason.
func cohereReason(w string) Reason {
	switch w {
	case "COMPLETE", "STOP_SEQUENCE":
		return ReasonStop
	case "TOOL_CALL":
		return ReasonToolCalls
	case "MAX_TOKENS":
		return ReasonLength
	case "ERROR", "TIMEOUT":
		return ReasonError
	}
	return ReasonUnknown
}

// scalarString renders a JSON string or number as text ("STOP", "1", "400");
// anything else gives "".
func scalarString(raw jsontext.Value) string {
	switch raw.Kind() {
	case '"':
		s, _ := appendJSONString(nil, raw)
		return string(s)
	case '0':
		return string(raw)
	}
	return ""
}

// decodeError reads a provider error value: an object with message/type/
// code/status/failed_generation, or a bare string (Ollama). It returns nil
// for null or absent.
func decodeError(raw jsontext.Value) *Error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw.Kind() == '"' {
		return &Error{Message: scalarString(raw)}
	}
	var e struct {
		Type    string         `json:"type"`
		Code    jsontext.Value `json:"code"`
		Status  string         `json:"status"`
		Message wireString     `json:"message"`
		// the model's own rejected output: recovery reads it byte for byte
		FailedGeneration wireString `json:"failed_generation"`
	}
	if unmarshal("error", raw, &e) != nil {
		return &Error{Message: strings.TrimSpace(string(raw))}
	}
	out := &Error{Type: e.Type, Code: scalarString(e.Code), Message: string(e.Message), FailedGeneration: string(e.FailedGeneration)}
	if out.Type == "" {
		out.Type = e.Status
	}
	return out
}
