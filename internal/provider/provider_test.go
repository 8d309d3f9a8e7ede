package provider

import (
	"errors"
	"testing"
)

func TestKnown(t *testing.T) {
	for _, p := range Names() {
		if !Known(p) {
			t.Errorf("%s not known", p)
		}
	}
	for _, p := range []string{"", "openai", "Anthropic", "vllm"} {
		if Known(p) {
			t.Errorf("%q known", p)
		}
		if _, err := NewAccumulator(p); !errors.Is(err, ErrUnknownProvider) {
			t.Errorf("NewAccumulator(%q) err %v", p, err)
		}
		if _, err := ParseResponse(p, []byte(`{}`)); !errors.Is(err, ErrUnknownProvider) {
			t.Errorf("ParseResponse(%q) err %v", p, err)
		}
	}
}

// garbage is input that is no provider's response, for every provider.
var garbage = []string{
	"", " ", "not json", "{", `{"choices":`, "null", "5", `"text"`, "[]", "{}", "[1,2]",
	"\x00\xff\xfe", `{"choices":5}`, `{"choices":[{"delta":7}]}`, `{"type":5}`, `{"candidates":{}}`,
	`{"message":[]}`, `{"done":"yes"}`, `{"output":{}}`, `{"type":"message_start"}`,
	`{"type":"content_block_start","index":0}`, `{"type":"response.completed"}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","partialArgs":[{"jsonPath":"nope","stringValue":"x"}]}}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":7}}]}}]}`,
}

func TestParseResponse_garbage_is_an_error_for_every_provider(t *testing.T) {
	for _, p := range Names() {
		for _, g := range garbage {
			if r, err := ParseResponse(p, []byte(g)); err == nil {
				t.Errorf("%s %q: accepted as %+v", p, g, r)
			}
		}
	}
}

func TestGemini_stray_partial_args_without_open_call_are_ignored(t *testing.T) {
	a := feed(t, Gemini, `{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.a","stringValue":"x"}]}},{"functionCall":{}}]}}]}`)
	if len(a.Response().Calls) != 0 {
		t.Errorf("calls from stray fragments: %+v", a.Response().Calls)
	}
}

func TestAccumulator_Add_garbage_errors_and_stays_usable(t *testing.T) {
	valid := map[string][]string{
		OpenAIChat: {`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`},
		OpenAIResponses: {`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"i","call_id":"a","name":"f","arguments":"{}"}}`,
			`{"type":"response.completed","response":{"status":"completed","output":[]}}`},
		Anthropic: {`{"type":"message_start","message":{"id":"m","content":[]}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"f","input":{}}}`,
			`{"type":"content_block_stop","index":0}`, `{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`, `{"type":"message_stop"}`},
		Gemini: {`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]},"finishReason":"STOP"}]}`},
		Ollama: {`{"message":{"tool_calls":[{"function":{"name":"f","arguments":{}}}]},"done":true,"done_reason":"stop"}`},
	}
	for p, events := range valid {
		a, _ := NewAccumulator(p)
		for _, ev := range events {
			for _, g := range garbage {
				if err := a.Add([]byte(g)); err == nil {
					t.Errorf("%s: garbage %q accepted", p, g)
				}
			}
			if err := a.Add([]byte(ev)); err != nil {
				t.Fatalf("%s: valid event after garbage: %v", p, err)
			}
		}
		r := a.Response()
		if !a.Done() || len(r.Calls) != 1 || r.Calls[0].Name != "f" || r.Calls[0].Arguments != "{}" || r.Finish != ReasonToolCalls {
			t.Errorf("%s: after garbage: %+v", p, r)
		}
	}
}
