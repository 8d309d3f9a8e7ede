package provider

import (
	"strings"
	"testing"
)

// xAI's built-in search tools come back in Responses format as
// custom_tool_call items with xs_call_ ids, already run by xAI, the answer
// text after them (own text after xAI's Responses API with server-side
// tools). None may come out as a client call (issue 32: they did, so a
// search xAI had run would have run again here); a client custom tool in
// the same response still does.
func TestResponses_xai_server_side_tool_calls_are_not_client_calls(t *testing.T) {
	const whole = `{"id":"resp_x","object":"response","model":"grok-4-fast","status":"completed","output":[` +
		`{"type":"custom_tool_call","id":"xs_call_01","call_id":"xs_call_01","name":"x_keyword_search","input":"{\"query\":\"toolgate\",\"limit\":\"10\"}","status":"completed"},` +
		`{"type":"custom_tool_call","id":"ctc_9","call_id":"xs_call_02","name":"x_semantic_search","input":"{\"query\":\"gates\"}","status":"completed"},` +
		`{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Two posts mention it.","annotations":[]}]},` +
		`{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"write_sql","input":"select 1","status":"completed"}]}`
	r, err := ParseResponse(OpenAIResponses, []byte(whole))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Calls) != 1 || r.Calls[0].Name != "write_sql" || r.Calls[0].ID != "call_1" || r.Text != "Two posts mention it." {
		t.Fatalf("whole: calls %+v text %q, want only write_sql", r.Calls, r.Text)
	}

	events := []string{
		`{"type":"response.created","response":{"id":"resp_s","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"custom_tool_call","id":"xs_call_11","call_id":"xs_call_11","name":"x_keyword_search","input":"","status":"in_progress"}}`,
		`{"type":"response.custom_tool_call_input.delta","output_index":0,"item_id":"xs_call_11","delta":"{\"query\":"}`,
		`{"type":"response.custom_tool_call_input.delta","output_index":0,"item_id":"xs_call_11","delta":"\"toolgate\"}"}`,
		`{"type":"response.custom_tool_call_input.done","output_index":0,"item_id":"xs_call_11","input":"{\"query\":\"toolgate\"}"}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"custom_tool_call","id":"xs_call_11","call_id":"xs_call_11","name":"x_keyword_search","input":"{\"query\":\"toolgate\"}","status":"completed"}}`,
		`{"type":"response.output_text.delta","output_index":1,"item_id":"msg_1","content_index":0,"delta":"Found it."}`,
		`{"type":"response.completed","response":{"id":"resp_s","status":"completed","output":[` +
			`{"type":"custom_tool_call","id":"xs_call_11","call_id":"xs_call_11","name":"x_keyword_search","input":"{\"query\":\"toolgate\"}","status":"completed"},` +
			`{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Found it.","annotations":[]}]}]}}`,
	}
	a := feed(t, OpenAIResponses, events...)
	sr := a.Response()
	if !a.Done() || len(sr.Calls) != 0 || !strings.Contains(sr.Text, "Found it.") {
		t.Fatalf("streamed: done %v calls %+v text %q, want no call", a.Done(), sr.Calls, sr.Text)
	}
	// A client custom tool whose id merely looks alike is still a call.
	c, err := ParseResponse(OpenAIResponses, []byte(`{"status":"completed","output":[{"type":"custom_tool_call","id":"ctc_2","call_id":"call_xs_call_3","name":"x_keyword_search","input":"q"}]}`))
	if err != nil || len(c.Calls) != 1 {
		t.Fatalf("client custom tool: %+v, %v", c.Calls, err)
	}
}
