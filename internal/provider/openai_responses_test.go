package provider

import (
	"strings"
	"testing"
)

func TestOpenAIResponses_fixtures(t *testing.T) {
	for _, test := range []struct {
		file   string
		finish Reason
		calls  []wantCall
	}{
		{"azure-gpt-5.1-function-call.chunks.jsonl", ReasonToolCalls, []wantCall{{"weather", `{"location":"San Francisco"}`}}},
		{"lmstudio-ministral-function-call-no-arg-deltas.chunks.jsonl", ReasonToolCalls, []wantCall{{"weather", `{"location":"San Francisco"}`}}},
		{"openai-gpt-4o-parallel-function-calls.json", ReasonToolCalls, []wantCall{
			{"get_location", `{"loc_name":"Londos"}`}, {"get_location", `{"loc_name":"London"}`}}},
		{"openai-gpt-5.2-codex-custom-tool-call.chunks.jsonl", ReasonToolCalls, []wantCall{{"write_sql", `{"input":"SELECT * FROM users WHERE age > 25"}`}}},
		{"openai-gpt-5.2-codex-custom-tool-call.json", ReasonToolCalls, []wantCall{{"write_sql", `{"input":"SELECT * FROM users WHERE age > 25"}`}}},
		{"deepseek-v4-flash-responses-function-call.stream.sse", ReasonToolCalls, []wantCall{{"get_temperature", `{"city": "Tokyo"}`}}},
	} {
		t.Run(test.file, func(t *testing.T) {
			r := fixtureResponses(t, OpenAIResponses, test.file)[0]
			checkCalls(t, r, test.finish, test.calls...)
			if strings.Contains(test.file, "custom") && (!r.Calls[0].FreeText || r.Calls[0].Kind != KindCustomTool) {
				t.Error("custom tool call not marked FreeText and custom_tool_call")
			}
		})
	}
}

func TestOpenAIResponses_recording_of_four_responses_splits_at_terminal_events(t *testing.T) {
	rs := fixtureResponses(t, OpenAIResponses, "openai-gpt-5-mini-multistep-calculator.chunks.jsonl")
	if len(rs) != 4 {
		t.Fatalf("got %d responses, want 4", len(rs))
	}
	checkCalls(t, rs[0], ReasonToolCalls, wantCall{"calculator", `{"a":12,"b":7,"op":"add"}`})
	checkCalls(t, rs[3], ReasonStop)
	if rs[3].Text != "The final result is **570**." {
		t.Errorf("final text %q", rs[3].Text)
	}
}

func TestOpenAIResponses_incomplete_max_output_tokens_is_length_and_truncated(t *testing.T) {
	a := feed(t, OpenAIResponses,
		`{"type":"response.created","response":{"id":"resp_1","model":"m","status":"in_progress","max_output_tokens":16,"output":[]}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":""}}`,
		`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"a\":\"lo"}`)
	if a.Done() {
		t.Fatal("done before response.incomplete")
	}
	if err := a.Add([]byte(`{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"output_tokens":16},"output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":\"lo","status":"incomplete"}]}}`)); err != nil {
		t.Fatal(err)
	}
	r := a.Response()
	checkCalls(t, r, ReasonLength, wantCall{"f", `{"a":"lo`})
	if !r.Complete || r.ProviderFinish != "incomplete:max_output_tokens" || !r.Calls[0].Truncated || r.MaxTokens != 16 {
		t.Errorf("%+v", r)
	}
}

func TestOpenAIResponses_error_event_ends_the_stream(t *testing.T) {
	a := feed(t, OpenAIResponses,
		`{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`,
		`{"type":"error","code":"server_error","message":"boom"}`)
	r := a.Response()
	if !a.Done() || r.Finish != ReasonError || r.Error == nil || r.Error.Code != "server_error" || r.Error.Message != "boom" {
		t.Errorf("%+v %+v", r, r.Error)
	}
}

func TestOpenAIResponses_items_without_ids_are_one_call(t *testing.T) {
	a := feed(t, OpenAIResponses,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"call_1","name":"f","arguments":""}}`,
		`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"a\":"}`,
		`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"1}"}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"call_1","name":"f","arguments":"{\"a\":1}"}}`,
		`{"type":"response.completed","response":{"status":"completed","output":[]}}`)
	checkCalls(t, a.Response(), ReasonToolCalls, wantCall{"f", `{"a":1}`})
}
