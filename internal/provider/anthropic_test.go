package provider

import (
	"strings"
	"testing"
)

func TestAnthropic_fixtures(t *testing.T) {
	for _, test := range []struct {
		file   string
		finish Reason
		calls  []wantCall
	}{
		{"claude-3-7-sonnet-tool-use.stream.sse", ReasonToolCalls, []wantCall{{"get_weather", `{"city": "San Francisco", "units": "fahrenheit"}`}}},
		{"claude-haiku-4-5-tool-use-padded.stream.sse", ReasonToolCalls, []wantCall{{"get_weather", `{"location": "San Francisco, CA", "units": "f"}`}}},
		{"claude-sonnet-4-5-tool-use-no-args.chunks.jsonl", ReasonToolCalls, []wantCall{{"updateIssueList", `{}`}}},
		{"claude-3-opus-tool-use-no-args.json", ReasonToolCalls, []wantCall{{"updateIssueList", `{}`}}},
		{"claude-haiku-4-5-parallel-tool-use.json", ReasonToolCalls, []wantCall{
			{"retrieve_entity_info", `{"name":"Alice"}`}, {"retrieve_entity_info", `{"name":"Bob"}`},
			{"retrieve_entity_info", `{"name":"Charlie"}`}, {"retrieve_entity_info", `{"name":"Daisy"}`}}},
		// server_tool_use (code_execution) is Anthropic's own; only the client tool_use is a call.
		{"claude-opus-4-5-programmatic-tool-use.json", ReasonToolCalls, []wantCall{{"get_weather", `{"location":"San Francisco, CA","units":"c"}`}}},
		// mcp_tool_use runs on Anthropic's side and carries its result.
		{"claude-sonnet-4-5-mcp-tool-use.json", ReasonStop, nil},
	} {
		t.Run(test.file, func(t *testing.T) {
			checkCalls(t, fixtureResponses(t, Anthropic, test.file)[0], test.finish, test.calls...)
		})
	}
}

func TestAnthropic_max_tokens_cut_tool_input_is_truncated(t *testing.T) {
	r := fixtureResponses(t, Anthropic, "claude-3-7-sonnet-max-tokens-truncated-tool-input.stream.sse")[0]
	if r.Finish != ReasonLength || r.ProviderFinish != "max_tokens" || len(r.Calls) != 1 {
		t.Fatalf("%+v", r)
	}
	c := r.Calls[0]
	if !c.Truncated || c.ArgumentsWereObject || !strings.HasSuffix(c.Arguments, `"Filing taxes`) || !unclosedJSON(c.Arguments) {
		t.Errorf("%+v", c)
	}
}

func TestAnthropic_object_input_is_canonical_and_stream_text_is_raw(t *testing.T) {
	r, err := ParseResponse(Anthropic, []byte(`{"id":"m","type":"message","content":[{"type":"tool_use","id":"t","name":"f","input":{"b":1, "a":{"d":2,"c":3}}}],"stop_reason":"tool_use"}`))
	if err != nil {
		t.Fatal(err)
	}
	checkCalls(t, r, ReasonToolCalls, wantCall{"f", `{"a":{"c":3,"d":2},"b":1}`})
	if !r.Calls[0].ArgumentsWereObject {
		t.Error("whole input not marked as object")
	}
}

func TestAnthropic_block_never_stopped_is_truncated_even_with_tool_use(t *testing.T) {
	a := feed(t, Anthropic,
		`{"type":"message_start","message":{"id":"m","model":"c","content":[],"stop_reason":null}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\": 1}"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`,
		`{"type":"message_stop"}`)
	r := a.Response()
	if c := r.Calls[0]; !c.Truncated || !strings.Contains(c.TruncatedWhy, "open") || r.Finish != ReasonToolCalls {
		t.Errorf("%+v", r)
	}
}

func TestAnthropic_error_event_and_error_body(t *testing.T) {
	a := feed(t, Anthropic,
		`{"type":"message_start","message":{"id":"m","content":[]}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	r := a.Response()
	if !a.Done() || r.Finish != ReasonError || r.Error.Type != "overloaded_error" {
		t.Errorf("event: %+v", r)
	}
	r, err := ParseResponse(Anthropic, []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`))
	if err != nil || r.Finish != ReasonError || r.Error.Message != "bad" {
		t.Errorf("body: %+v %v", r, err)
	}
}

func TestAnthropic_refusal_and_ping_after_stop(t *testing.T) {
	a := feed(t, Anthropic,
		`{"type":"message_start","message":{"id":"m","content":[]}}`,
		`{"type":"message_delta","delta":{"stop_reason":"refusal"}}`,
		`{"type":"message_stop"}`,
		`{"type":"ping"}`)
	if r := a.Response(); r.Finish != ReasonRefusal {
		t.Errorf("finish %s", r.Finish)
	}
}
