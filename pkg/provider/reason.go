package provider

import (
	"encoding/json"
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
// enum-encoding=int.
var geminiEnum = []string{
	"FINISH_REASON_UNSPECIFIED", "STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER",
	"BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "IMAGE_SAFETY",
	"UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS",
}

// geminiReason maps a Gemini finishReason given as a name or as its integer.
func geminiReason(w string) Reason {
	if n, err := strconv.Atoi(w); err == nil {
		if n < 0 || n >= len(geminiEnum) {
			return ReasonUnknown
		}
		w = geminiEnum[n]
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

// scalarString renders a JSON string or number as text ("STOP", "1", "400");
// anything else gives "".
func scalarString(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// decodeError reads a provider error value: an object with message/type/
// code/status/failed_generation, or a bare string (Ollama). It returns nil
// for null or absent.
func decodeError(raw json.RawMessage) *Error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var msg string
	if json.Unmarshal(raw, &msg) == nil {
		return &Error{Message: msg}
	}
	var e struct {
		Type             string          `json:"type"`
		Code             json.RawMessage `json:"code"`
		Status           string          `json:"status"`
		Message          string          `json:"message"`
		FailedGeneration string          `json:"failed_generation"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return &Error{Message: strings.TrimSpace(string(raw))}
	}
	out := &Error{Type: e.Type, Code: scalarString(e.Code), Message: e.Message, FailedGeneration: e.FailedGeneration}
	if out.Type == "" {
		out.Type = e.Status
	}
	return out
}
