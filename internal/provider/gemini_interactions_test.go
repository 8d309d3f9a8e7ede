package provider

import (
	"errors"
	"strings"
	"testing"
)

// interStream is a streamed function call in the 2026-05-20 revision; the
// last event is the terminal one.
var interStream = []string{
	`{"event_type":"interaction.created","interaction":{"id":"v1_t","status":"in_progress","model":"m"}}`,
	`{"event_type":"step.start","index":0,"step":{"type":"function_call","id":"fc_1","name":"get_weather","arguments":{}}}`,
	`{"event_type":"step.delta","index":0,"delta":{"type":"arguments_delta","arguments":"{\"location\":\"Paris\"}"}}`,
	`{"event_type":"step.stop","index":0}`,
	`{"event_type":"interaction.status_update","interaction_id":"v1_t","status":"requires_action"}`,
	`{"event_type":"interaction.requires_action","interaction_id":"v1_t"}`,
	`{"event_type":"interaction.completed","interaction":{"id":"v1_t","status":"requires_action","usage":{"total_output_tokens":9}}}`,
}

// A call whose arguments and step are whole is still a draft until
// interaction.completed: status updates saying requires_action end nothing.
func TestGeminiInteractions_stream_is_done_only_at_its_terminal_event(t *testing.T) {
	a, err := NewAccumulator(GeminiInteractions)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range interStream {
		if a.Done() || a.Response().Complete {
			t.Fatalf("done after %d events, before interaction.completed", i)
		}
		if err := a.Add([]byte(ev)); err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
	}
	r := a.Response()
	if !a.Done() || !r.Complete || r.Finish != ReasonToolCalls || len(r.Calls) != 1 || r.Calls[0].Arguments != `{"location":"Paris"}` || r.Calls[0].Truncated {
		t.Fatalf("response %+v", r)
	}
	if err := a.Add([]byte(interStream[1])); !errors.Is(err, ErrAfterTerminal) {
		t.Fatalf("a step after the terminal event: err %v, want ErrAfterTerminal", err)
	}
}

// The error event ends the stream with the provider's error; the call it
// cut is truncated.
func TestGeminiInteractions_error_event_is_terminal_and_cuts_the_open_call(t *testing.T) {
	a, _ := NewAccumulator(GeminiInteractions)
	for _, ev := range append(append([]string(nil), interStream[:3]...), `{"event_type":"error","error":{"code":"internal","message":"overloaded"}}`) {
		if err := a.Add([]byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	r := a.Response()
	if !r.Complete || r.Error == nil || r.Error.Message != "overloaded" || r.Finish != ReasonError || !r.Calls[0].Truncated {
		t.Fatalf("response %+v", r)
	}
}

// Status words map as vercel/ai maps them; a failed, cancelled or
// unfinished interaction's calls are truncated, never run as proposed.
func TestGeminiInteractions_status_is_the_finish_reason(t *testing.T) {
	for _, test := range []struct {
		status    string
		want      Reason
		truncated bool
	}{
		{"requires_action", ReasonToolCalls, false},
		{"completed", ReasonToolCalls, false}, // completed with a call: tool_calls
		{"incomplete", ReasonLength, true},
		{"failed", ReasonError, true},
		{"cancelled", ReasonUnknown, true},
		{"in_progress", ReasonUnknown, true},
	} {
		t.Run(test.status, func(t *testing.T) {
			r, err := ParseResponse(GeminiInteractions, []byte(`{"status":"`+test.status+`","outputs":[{"type":"function_call","id":"a","name":"f","arguments":{"x":1}}]}`))
			if err != nil {
				t.Fatal(err)
			}
			if r.Finish != test.want || r.ProviderFinish != test.status || r.Calls[0].Truncated != test.truncated {
				t.Fatalf("finish %s (%s), truncated %v; want %s, %v", r.Finish, r.ProviderFinish, r.Calls[0].Truncated, test.want, test.truncated)
			}
		})
	}
	r, err := ParseResponse(GeminiInteractions, []byte(`{"status":"completed","outputs":[{"type":"text","text":"hi"}]}`))
	if err != nil || r.Finish != ReasonStop || r.Text != "hi" {
		t.Fatalf("text only: %+v %v", r, err)
	}
}

// An HTTP error body (Google's error object, no status) is the provider's
// error; a body with neither is not an interaction.
func TestGeminiInteractions_error_body_and_unknown_shape(t *testing.T) {
	r, err := ParseResponse(GeminiInteractions, []byte(`{"error":{"code":400,"message":"bad tool","status":"INVALID_ARGUMENT"}}`))
	if err != nil || r.Error == nil || r.Error.Type != "INVALID_ARGUMENT" || r.Error.Code != "400" || r.Finish != ReasonError {
		t.Fatalf("error body: %+v %v", r, err)
	}
	if _, err := ParseResponse(GeminiInteractions, []byte(`{"candidates":[]}`)); err == nil {
		t.Fatal("a generateContent body read as an interaction")
	}
}

// Hostile events are refused with a reason, and leave no call behind.
func TestGeminiInteractions_hostile_events_are_refused(t *testing.T) {
	start := interStream[1]
	for _, test := range []struct {
		name   string
		before []string
		ev     string
		want   string
	}{
		{"no event_type", nil, `{"index":0}`, "no event_type"},
		{"unknown event", nil, `{"event_type":"content.explode","index":0}`, `"content.explode"`},
		{"[DONE] before the end", nil, `[DONE]`, "[DONE]"},
		{"delta before start", nil, interStream[2], "which no start opened"},
		{"start twice", []string{start}, start, "already started"},
		{"delta after stop", []string{start, interStream[3]}, interStream[2], "after its stop"},
		{"arguments not a string", []string{start}, `{"event_type":"step.delta","index":0,"delta":{"type":"arguments_delta","arguments":{"a":1}}}`, "must be a JSON string"},
		{"arguments not an object", nil, `{"event_type":"content.start","index":0,"content":{"type":"function_call","id":"a","name":"f","arguments":"{}"}}`, "must be an object"},
		{"text delta into a call", []string{start}, `{"event_type":"step.delta","index":0,"delta":{"type":"text","text":"x"}}`, "a function_call block"},
		{"start without index", nil, `{"event_type":"step.start","step":{"type":"function_call","id":"a","name":"f"}}`, "without index"},
		{"complete without status", nil, `{"event_type":"interaction.completed","interaction":{"id":"x"}}`, "without interaction.status"},
		{"duplicate key", nil, `{"event_type":"step.start","index":0,"step":{"type":"function_call","name":"get_weather","name":"delete_all"}}`, "duplicate key"},
	} {
		t.Run(test.name, func(t *testing.T) {
			a, _ := NewAccumulator(GeminiInteractions)
			for _, ev := range test.before {
				if err := a.Add([]byte(ev)); err != nil {
					t.Fatal(err)
				}
			}
			calls := len(a.Response().Calls)
			err := a.Add([]byte(test.ev))
			if err == nil || !strings.Contains(err.Error(), test.want) || !strings.HasPrefix(err.Error(), "provider: gemini-interactions: ") {
				t.Fatalf("err %v, want one naming %s", err, test.want)
			}
			if len(a.Response().Calls) != calls || a.Done() {
				t.Fatalf("a refused event changed the response: %+v", a.Response())
			}
		})
	}
}

// Built-in tools ran on Google's side: their call and result steps are no
// client calls, and thought steps are not text.
func TestGeminiInteractions_builtin_tools_and_thoughts_are_not_calls_or_text(t *testing.T) {
	r, err := ParseResponse(GeminiInteractions, []byte(`{"status":"completed","outputs":[`+
		`{"type":"thought","summary":[{"type":"text","text":"call get_weather"}]},`+
		`{"type":"code_execution_call","id":"c1","arguments":{"code":"print(1)"}},`+
		`{"type":"code_execution_result","call_id":"c1","result":"1"},`+
		`{"type":"mcp_server_tool_call","id":"m1","name":"delete_all","server_name":"s","arguments":{}},`+
		`{"type":"text","text":"done"}]}`))
	if err != nil || len(r.Calls) != 0 || r.Text != "done" || r.Finish != ReasonStop {
		t.Fatalf("%+v %v", r, err)
	}
}

// The result goes back as a function_result block paired by call_id, the
// failure flagged.
func TestGeminiInteractions_tool_result_is_a_function_result(t *testing.T) {
	m, err := ToolResult(GeminiInteractions, Answer{ID: "fc_1", Tool: "get_weather", Text: `{"temp":"<15C>"}`, OK: true})
	if err != nil || string(m) != `{"type":"function_result","call_id":"fc_1","name":"get_weather","result":"{\"temp\":\"<15C>\"}","is_error":false}` {
		t.Fatalf("%s %v", m, err)
	}
	m, err = ToolResult(GeminiInteractions, Answer{ID: "fc_1", Text: "Error: no", OK: false})
	if err != nil || string(m) != `{"type":"function_result","call_id":"fc_1","result":"Error: no","is_error":true}` {
		t.Fatalf("%s %v", m, err)
	}
	if _, err := ToolResult(GeminiInteractions, Answer{Tool: "t"}); !errors.Is(err, ErrNoCallID) {
		t.Fatalf("no id: %v", err)
	}
}

func TestGeminiInteractions_is_detected(t *testing.T) {
	for _, body := range []string{
		`{"object":"interaction","status":"completed","outputs":[]}`,
		interStream[0], interStream[3],
		`{"event_type":"content.start","index":0,"content":{"type":"text"}}`,
	} {
		if p, err := Detect([]byte(body)); p != GeminiInteractions || err != nil {
			t.Errorf("Detect(%s) = %q, %v", body, p, err)
		}
	}
}

// A stream whose only content is its terminal event's interaction (a
// producer relaying the final event) keeps that interaction's calls; when
// the events carried the blocks, the terminal copies are not read twice.
func TestGeminiInteractions_terminal_event_blocks_are_read_once(t *testing.T) {
	final := `{"event_type":"interaction.completed","interaction":{"id":"v1_t","status":"requires_action","outputs":[{"type":"function_call","id":"fc_1","name":"get_weather","arguments":{"location":"Paris"}}]}}`
	a, _ := NewAccumulator(GeminiInteractions)
	if err := a.Add([]byte(final)); err != nil {
		t.Fatal(err)
	}
	if r := a.Response(); !r.Complete || len(r.Calls) != 1 || r.Calls[0].Arguments != `{"location":"Paris"}` {
		t.Fatalf("final event only: %+v", r)
	}
	a, _ = NewAccumulator(GeminiInteractions)
	for _, ev := range append(append([]string(nil), interStream[:4]...), final) {
		if err := a.Add([]byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	if r := a.Response(); len(r.Calls) != 1 {
		t.Fatalf("streamed and final: %d calls, want 1", len(r.Calls))
	}
}
