package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ErrUndetected matches (errors.Is) every error of Detect: the input's
// provider cannot be told from its shape.
var ErrUndetected = errors.New("provider: cannot tell the provider from the body")

// detectEvents bounds how many events of a transcript Detect reads before
// giving up: the first events of every provider's stream name it.
const detectEvents = 16

// Detect tells which provider wrote data, a whole response body or a
// recorded stream (anything SplitTranscript reads), from its shape alone: the
// keys and event types each provider's wire format has and the others do not
// (openai-chat "choices", openai-responses "object": "response" or
// "response.*" events, anthropic "message" and "message_start", gemini
// "candidates", ollama "done" with "message", bedrock-converse "output" and
// "contentBlockDelta", cohere "finish_reason" with "message" and hyphenated
// event types, gemini-interactions "object": "interaction" and its
// event_type events). An OpenAI-compatible body of any vendor is openai-chat. It
// decides on the first event that names one provider; an error (wrapping
// ErrUndetected) names what it saw and lists the providers.
func Detect(data []byte) (string, error) {
	if isEventStream(data) {
		return BedrockConverse, nil // AWS event-stream framing is Bedrock's alone
	}
	events := [][]byte{data}
	if IsTranscript(data) {
		evs, err := SplitTranscript(data)
		if len(evs) == 0 {
			return "", fmt.Errorf("%w: %v", ErrUndetected, err)
		}
		events = evs
	}
	var saw []string
	for i, ev := range events {
		if i == detectEvents {
			break
		}
		name, keys := detectOne(ev)
		if name != "" {
			return name, nil
		}
		saw = append(saw, keys...)
	}
	return "", undetected(saw)
}

// undetected says what Detect saw and what it can read.
func undetected(saw []string) error {
	slices.Sort(saw)
	saw = slices.Compact(saw)
	if len(saw) > 12 {
		saw = append(saw[:12], "…")
	}
	what := "no JSON object"
	if len(saw) > 0 {
		what = "keys " + strings.Join(saw, ", ")
	}
	return fmt.Errorf("%w (saw %s): give --provider, one of %s", ErrUndetected, what, strings.Join(Names(), ", "))
}

// detectOne classifies one JSON object, a body or one stream event; "" with
// its top-level keys when it names no provider.
func detectOne(ev []byte) (string, []string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(ev, &m) != nil {
		return "", nil // [DONE], a keep-alive, junk
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	has := func(k string) bool { _, ok := m[k]; return ok }
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(m[k], &s)
		return s
	}
	typ, object := str("type"), str("object")
	switch {
	case object == "interaction" || (has("event_type") && interKnown(str("event_type"))):
		return GeminiInteractions, nil
	case strings.HasPrefix(object, "chat.completion") || has("choices"):
		return OpenAIChat, nil
	case object == "response" || strings.HasPrefix(typ, "response."):
		return OpenAIResponses, nil
	case anthropicType(typ):
		return Anthropic, nil
	case cohereKnown(typ):
		return Cohere, nil
	case typ == "error" && has("error"):
		return Anthropic, nil // Responses' error event carries code and message at the top
	case typ == "error" && has("sequence_number"):
		return OpenAIResponses, nil
	case has("candidates") || has("promptFeedback"):
		return Gemini, nil
	case has("done") && (has("message") || has("created_at")):
		return Ollama, nil
	case bedrockKeys(m):
		return BedrockConverse, nil
	case has("finish_reason") && has("message"):
		return Cohere, nil // v2 chat; OpenAI's finish_reason sits inside choices
	case len(m) == 1 && has("error"):
		return errorBody(m["error"]), nil
	}
	return "", keys
}

func anthropicType(t string) bool {
	switch t {
	case "message", "message_start", "message_delta", "message_stop",
		"content_block_start", "content_block_delta", "content_block_stop", "ping":
		return true
	}
	return false
}

// bedrockKeys: a Converse body ("output" holding "message", "stopReason")
// or a ConverseStream event (one of its event names, an exception).
func bedrockKeys(m map[string]json.RawMessage) bool {
	if _, ok := m["stopReason"]; ok {
		return true
	}
	if out, ok := m["output"]; ok && strings.Contains(string(out), `"message"`) {
		return true
	}
	for k := range m {
		switch k {
		case "messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop":
			return true
		}
		if strings.HasSuffix(k, "Exception") {
			return true
		}
	}
	return false
}

// errorBody tells an error body's provider: Gemini's carries a status word
// ("INVALID_ARGUMENT"), OpenAI's and its compatibles' a message and a type.
func errorBody(raw json.RawMessage) string {
	var e struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Status != "" {
		return Gemini
	}
	return OpenAIChat
}
