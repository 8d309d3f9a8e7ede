package provider

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// terminalRules is testdata/terminal/<provider>.json: independently of the
// codecs, which events are a provider's terminal event. An event is terminal
// when it is the sentinel, carries "error", or one rule matches: a value at
// path ("*" walks every element of an array) that is in the list, is
// present, or is a non-empty string. With Together, the stream also ends
// once every one of those paths was present in some event, in any order
// (Bedrock's messageStop and metadata).
type terminalRules struct {
	Sentinel string     `json:"sentinel"`
	Together [][]string `json:"together"`
	Rules    []struct {
		Path     []string `json:"path"`
		In       []any    `json:"in"`
		Present  bool     `json:"present"`
		Nonempty bool     `json:"nonempty"`
	} `json:"rules"`
}

// loadTerminal reads a provider's terminal rules.
func loadTerminal(t *testing.T, provider string) terminalRules {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "terminal", provider+".json"))
	if err != nil {
		t.Fatalf("oracle: a provider needs its terminal rules: %v", err)
	}
	var tr terminalRules
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatalf("oracle: %s: %v", provider, err)
	}
	return tr
}

// terminalState follows a stream's events for the oracle.
type terminalState struct {
	tr   terminalRules
	seen []bool
	done bool
}

func (tr terminalRules) start() *terminalState {
	return &terminalState{tr: tr, seen: make([]bool, len(tr.Together))}
}

// add takes the next event and reports whether the stream has ended.
func (s *terminalState) add(t *testing.T, ev []byte) bool {
	t.Helper()
	if terminalOracle(t, s.tr, ev) {
		s.done = true
	}
	var m map[string]any
	if len(s.tr.Together) == 0 || json.Unmarshal(ev, &m) != nil {
		return s.done
	}
	all := true
	for i, p := range s.tr.Together {
		for _, v := range valuesAt(m, p) {
			s.seen[i] = s.seen[i] || v != nil
		}
		all = all && s.seen[i]
	}
	s.done = s.done || all
	return s.done
}

// terminalOracle says, independently of the codecs, whether one event is a
// provider's terminal event.
func terminalOracle(t *testing.T, tr terminalRules, ev []byte) bool {
	t.Helper()
	if string(ev) == "[DONE]" {
		return tr.Sentinel == "[DONE]"
	}
	var m map[string]any
	if err := json.Unmarshal(ev, &m); err != nil {
		t.Fatalf("oracle: %v", err)
	}
	if m["error"] != nil {
		return true
	}
	for _, r := range tr.Rules {
		for _, v := range valuesAt(m, r.Path) {
			s, _ := v.(string)
			if (r.Present && v != nil) || (r.Nonempty && s != "") || slices.ContainsFunc(r.In, func(w any) bool { return reflect.DeepEqual(v, w) }) {
				return true
			}
		}
	}
	return false
}

// valuesAt returns the values at path in a decoded JSON value; "*" stands
// for every element of an array.
func valuesAt(v any, path []string) []any {
	if len(path) == 0 {
		return []any{v}
	}
	var out []any
	switch x := v.(type) {
	case map[string]any:
		if next, ok := x[path[0]]; ok {
			out = valuesAt(next, path[1:])
		}
	case []any:
		if path[0] == "*" {
			for _, e := range x {
				out = append(out, valuesAt(e, path[1:])...)
			}
		}
	}
	return out
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
			rules := loadTerminal(t, f.provider)
			for si, seg := range segments(t, f.provider, events) {
				var atTerminal []Call
				for k := 0; k <= len(seg); k++ {
					a, _ := NewAccumulator(f.provider)
					terminal, oracle := false, rules.start()
					for _, ev := range seg[:k] {
						if err := a.Add(ev); err != nil {
							t.Fatalf("segment %d event: %v", si, err)
						}
						terminal = oracle.add(t, ev)
					}
					r := a.Response()
					if a.Done() != terminal || r.Complete != terminal {
						t.Fatalf("segment %d cut after %d of %d events: Done=%v Complete=%v, terminal event seen=%v",
							si, k, len(seg), a.Done(), r.Complete, terminal)
					}
					if terminal && atTerminal == nil {
						atTerminal = r.Calls
					}
					if k == len(seg) && terminal && !reflect.DeepEqual(r.Calls, atTerminal) {
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
