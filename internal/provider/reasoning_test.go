package provider

import (
	"strings"
	"testing"
)

// draft is a call a model drafted while reasoning; no provider may put it
// into Response.Text, which tolerant parsing searches for calls.
const draft = `<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>`

func TestResponse_text_never_holds_the_reasoning_field(t *testing.T) {
	for _, test := range []struct {
		name, provider string
		whole          string   // a complete body; "" when only streamed
		events         []string // stream events; nil when only whole
	}{
		{"openai_chat_reasoning_content", OpenAIChat,
			`{"id":"x","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":"` + draft + `","reasoning":"` + draft + `","content":"Visible."},"finish_reason":"stop"}]}`, nil},
		{"openai_chat_reasoning_parts", OpenAIChat,
			`{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"reasoning","text":"` + draft + `"},{"type":"thinking","text":"` + draft + `"},{"type":"text","text":"Visible."}]},"finish_reason":"stop"}]}`, nil},
		{"openai_chat_stream_reasoning_content", OpenAIChat, "", []string{
			`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"` + draft + `"}}]}`,
			`{"id":"x","choices":[{"index":0,"delta":{"reasoning":"` + draft + `"}}]}`,
			`{"id":"x","choices":[{"index":0,"delta":{"content":"Visible."},"finish_reason":"stop"}]}`,
			`[DONE]`}},
		{"anthropic_thinking_blocks", Anthropic,
			`{"id":"m","type":"message","role":"assistant","model":"claude","content":[{"type":"thinking","thinking":"` + draft + `","signature":"sig"},{"type":"redacted_thinking","data":"abc"},{"type":"text","text":"Visible."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`, nil},
		{"anthropic_stream_thinking_delta", Anthropic, "", []string{
			`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"` + draft + `"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Visible."}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
			`{"type":"message_stop"}`}},
		{"gemini_thought_parts", Gemini,
			`{"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"` + draft + `","thought":true},{"text":"Visible."}]},"finishReason":"STOP"}]}`, nil},
		{"openai_responses_reasoning_item", OpenAIResponses,
			`{"id":"r","object":"response","status":"completed","model":"o4","output":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"` + draft + `"}],"content":[{"type":"reasoning_text","text":"` + draft + `"}]},{"type":"message","id":"m","role":"assistant","content":[{"type":"output_text","text":"Visible."}]}]}`, nil},
		{"openai_responses_stream_reasoning", OpenAIResponses, "", []string{
			`{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"` + draft + `"}`,
			`{"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0,"delta":"` + draft + `"}`,
			`{"type":"response.output_text.delta","item_id":"m","output_index":1,"content_index":0,"delta":"Visible."}`,
			`{"type":"response.completed","response":{"id":"r","object":"response","status":"completed","model":"o4","output":[]}}`}},
		{"ollama_thinking", Ollama,
			`{"model":"qwen3","created_at":"2026-12-01T10:00:00Z","message":{"role":"assistant","thinking":"` + draft + `","content":"Visible."},"done_reason":"stop","done":true}`, nil},
	} {
		t.Run(test.name, func(t *testing.T) {
			var r Response
			if test.whole != "" {
				var err error
				if r, err = ParseResponse(test.provider, []byte(test.whole)); err != nil {
					t.Fatal(err)
				}
			} else {
				a, err := NewAccumulator(test.provider)
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range test.events {
					if err := a.Add([]byte(ev)); err != nil {
						t.Fatalf("%s: %v", ev, err)
					}
				}
				if !a.Done() {
					t.Fatal("stream not finished")
				}
				r = a.Response()
			}
			if strings.Contains(r.Text, "tool_call") || r.Text != "Visible." {
				t.Fatalf("text %q, want only the visible text", r.Text)
			}
			if len(r.Calls) != 0 {
				t.Fatalf("calls %+v from reasoning", r.Calls)
			}
		})
	}
}
