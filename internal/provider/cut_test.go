package provider

import (
	"encoding/json"
	"reflect"
	"testing"
)

// terminalOracle says, independently of the codecs, whether one event is a
// provider's terminal event.
func terminalOracle(t *testing.T, provider string, ev []byte) bool {
	t.Helper()
	if string(ev) == "[DONE]" {
		return provider == OpenAIChat
	}
	var m map[string]any
	if err := json.Unmarshal(ev, &m); err != nil {
		t.Fatalf("oracle: %v", err)
	}
	if m["error"] != nil {
		return true
	}
	switch provider {
	case OpenAIChat:
		choices, _ := m["choices"].([]any)
		for _, c := range choices {
			if fr, _ := c.(map[string]any)["finish_reason"].(string); fr != "" {
				return true
			}
		}
	case OpenAIResponses:
		switch m["type"] {
		case "response.completed", "response.incomplete", "response.failed", "error":
			return true
		}
	case Anthropic:
		return m["type"] == "message_stop" || m["type"] == "error"
	case Gemini:
		cands, _ := m["candidates"].([]any)
		for _, c := range cands {
			if c.(map[string]any)["finishReason"] != nil {
				return true
			}
		}
	case Ollama:
		return m["done"] == true
	}
	return false
}

// TestStreams_cut_at_every_event_boundary_are_done_only_after_the_terminal_event
// feeds every stream fixture's first k events for every k: the accumulator is
// Done (and its response Complete) exactly when a terminal event was among
// them, and events after the terminal one (usage chunks, [DONE]) do not
// change the calls.
func TestStreams_cut_at_every_event_boundary_are_done_only_after_the_terminal_event(t *testing.T) {
	cuts := 0
	for _, f := range loadFixtures(t) {
		if !f.streamed() {
			continue
		}
		t.Run(f.dir+"/"+f.name, func(t *testing.T) {
			events, err := SplitTranscript(f.data)
			if err != nil {
				t.Fatal(err)
			}
			for si, seg := range segments(t, f.provider, events) {
				var atTerminal []Call
				for k := 0; k <= len(seg); k++ {
					a, _ := NewAccumulator(f.provider)
					terminal := false
					for _, ev := range seg[:k] {
						if err := a.Add(ev); err != nil {
							t.Fatalf("segment %d event: %v", si, err)
						}
						terminal = terminal || terminalOracle(t, f.provider, ev)
					}
					r := a.Response()
					if a.Done() != terminal || r.Complete != terminal {
						t.Fatalf("segment %d cut after %d of %d events: Done=%v Complete=%v, terminal event seen=%v",
							si, k, len(seg), a.Done(), r.Complete, terminal)
					}
					if terminal && atTerminal == nil {
						atTerminal = r.Calls
					}
					if k == len(seg) && !reflect.DeepEqual(r.Calls, atTerminal) {
						t.Errorf("segment %d: events after the terminal one changed the calls:\n%+v\n%+v", si, atTerminal, r.Calls)
					}
					cuts++
				}
			}
		})
	}
	if cuts < 500 {
		t.Errorf("only %d cuts tried", cuts)
	}
}

// TestStreams_cut_inside_arguments_is_a_draft: a stream cut while a call's
// arguments are still arriving is not Done and shows progress only.
func TestStreams_cut_inside_arguments_is_a_draft(t *testing.T) {
	events := []string{
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"create_invoice","arguments":""}}]},"finish_reason":null}]}`,
		`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"customer_id\":\"cus_98"}}]},"finish_reason":null}]}`,
		`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"21\",\"currency\":\"USD\","}}]},"finish_reason":null}]}`,
	}
	a, _ := NewAccumulator(OpenAIChat)
	for _, ev := range events {
		if err := a.Add([]byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	if a.Done() {
		t.Fatal("Done before any finish_reason")
	}
	p := a.Progress()
	if len(p) != 1 || p[0].Name != "create_invoice" || p[0].ArgumentBytes != len(`{"customer_id":"cus_9821","currency":"USD",`) {
		t.Errorf("progress = %+v", p)
	}
	r := a.Response()
	if r.Complete || r.Finish != ReasonUnknown {
		t.Errorf("draft response: Complete=%v Finish=%s", r.Complete, r.Finish)
	}
}
