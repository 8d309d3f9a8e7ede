package provider

import (
	"errors"
	"testing"
)

func TestOllama_fixtures(t *testing.T) {
	for _, test := range []struct {
		file  string
		id    string
		calls []wantCall
	}{
		{"ollama-llama3.2-tool-call.json", "", []wantCall{{"get_weather", `{"city":"Tokyo"}`}}},
		{"ollama-llama3.2-tool-call.stream.ndjson", "", []wantCall{{"get_weather", `{"city":"Tokyo"}`}}},
		{"ollama-gpt-oss-120b-tool-call.json", "call_mo1wm122", []wantCall{{"getWeather", `{"location":"San Francisco, CA"}`}}},
	} {
		t.Run(test.file, func(t *testing.T) {
			r := fixtureResponses(t, Ollama, test.file)[0]
			checkCalls(t, r, ReasonToolCalls, test.calls...)
			if r.ProviderFinish != "stop" || r.Calls[0].ID != test.id || !r.Calls[0].ArgumentsWereObject {
				t.Errorf("%+v", r)
			}
		})
	}
}

func TestOllama_stream_done_false_is_a_draft_and_line_after_done_is_rejected(t *testing.T) {
	a := feed(t, Ollama, `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"x":1}}}]},"done":false}`)
	if a.Done() || a.Response().Complete {
		t.Fatal("done:false is not terminal")
	}
	if err := a.Add([]byte(`{"model":"m","message":{"content":""},"done":true,"done_reason":"length","eval_count":7}`)); err != nil {
		t.Fatal(err)
	}
	r := a.Response()
	checkCalls(t, r, ReasonLength, wantCall{"f", `{"x":1}`})
	if !r.Calls[0].Truncated || r.OutputTokens != 7 {
		t.Errorf("%+v", r)
	}
	if err := a.Add([]byte(`{"message":{"content":"more"},"done":false}`)); !errors.Is(err, ErrAfterTerminal) {
		t.Errorf("err %v", err)
	}
}

func TestOllama_error_line(t *testing.T) {
	a := feed(t, Ollama, `{"error":"model 'x' not found"}`)
	if r := a.Response(); !a.Done() || r.Finish != ReasonError || r.Error.Message != "model 'x' not found" {
		t.Errorf("%+v", r)
	}
}
