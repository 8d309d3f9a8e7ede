package provider

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSplitJSONArray_one_event_per_element(t *testing.T) {
	for _, test := range []struct {
		name, in string
		want     []string
		cut      bool
		bad      bool
	}{
		{"as the API lays it out", "[{\n  \"a\": 1\n}\n,\r\n{\n  \"b\": 2\n}\n]", []string{"{\n  \"a\": 1\n}", "{\n  \"b\": 2\n}"}, false, false},
		{"one line", `[{"a":1},{"b":2}]`, []string{`{"a":1}`, `{"b":2}`}, false, false},
		{"byte order mark and space", "\ufeff \n[ {\"a\":1} ]\n", []string{`{"a":1}`}, false, false},
		{"strings with },{ and brackets", `[{"t":"},{\"x\":[1]},{"},{"u":"]"}]`, []string{`{"t":"},{\"x\":[1]},{"}`, `{"u":"]"}`}, false, false},
		{"escapes", `[{"t":"\\\"},{\u005d"}]`, []string{`{"t":"\\\"},{\u005d"}`}, false, false},
		{"arrays back to back", "[{\"a\":1}]\n[{\"b\":2}]", []string{`{"a":1}`, `{"b":2}`}, false, false},
		{"cut inside the second element", "[{\"a\":1}\n,\r\n{\"b\":\"},{", []string{`{"a":1}`}, true, false},
		{"cut after a comma", "[{\"a\":1},", []string{`{"a":1}`}, true, false},
		{"cut before the close", "[{\"a\":1}", []string{`{"a":1}`}, true, false},
		{"cut inside the first", `[{"a":`, nil, true, false},
		{"garbage after an element", `[{"a":1} x]`, []string{`{"a":1}`}, false, true},
		{"not an array after one", `[{"a":1}] {"b":2}`, []string{`{"a":1}`}, false, true},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, err := SplitTranscript([]byte(test.in))
			switch {
			case test.cut && !errors.Is(err, ErrCutTranscript):
				t.Fatalf("err %v, want ErrCutTranscript", err)
			case test.bad && (err == nil || errors.Is(err, ErrCutTranscript)):
				t.Fatalf("err %v, want a syntax error", err)
			case !test.cut && !test.bad && err != nil:
				t.Fatal(err)
			}
			if len(got) != len(test.want) {
				t.Fatalf("got %d events %q, want %q", len(got), got, test.want)
			}
			for i := range got {
				if string(got[i]) != test.want[i] {
					t.Errorf("event %d = %q, want %q", i, got[i], test.want[i])
				}
			}
		})
	}
	if _, err := SplitTranscript([]byte(" [ ] ")); !errors.Is(err, ErrEmptyTranscript) {
		t.Errorf("empty array: %v, want ErrEmptyTranscript", err)
	}
	if !IsTranscript([]byte("\n[{\"a\":1}]")) || !IsTranscript([]byte(`[{"a":`)) {
		t.Error("a JSON array, whole or cut, is a transcript")
	}
}

// Before the splitter the pretty-printed array was one "whole body" (or,
// cut, a run of line fragments): the accumulator never saw an event.
func TestGeminiArray_stream_is_events_and_its_call_is_complete(t *testing.T) {
	rs := localFixture(t, Gemini, "gemini-2.5-flash-function-call.stream.jsonarray")
	if len(rs) != 1 {
		t.Fatalf("got %d responses", len(rs))
	}
	checkCalls(t, rs[0], ReasonToolCalls, wantCall{"getWeather", `{"location":"Tokyo","note":"}]},{\"x\":1}"}`})
	if !strings.Contains(rs[0].Text, "},{ then Paris") {
		t.Errorf("text %q lost its brackets", rs[0].Text)
	}
	data, err := os.ReadFile(filepath.Join(localFixtureRoot, Gemini, "gemini-2.5-flash-function-call.stream.jsonarray"))
	if err != nil {
		t.Fatal(err)
	}
	// Every cut of the body: the complete elements only, never a fragment;
	// the response is complete only with the last element.
	for k := 1; k < len(data); k++ {
		evs, err := SplitTranscript(data[:k])
		if err != nil && !errors.Is(err, ErrCutTranscript) {
			t.Fatalf("cut at %d: %v", k, err)
		}
		a, _ := NewAccumulator(Gemini)
		for _, ev := range evs {
			if err := a.Add(ev); err != nil {
				t.Fatalf("cut at %d: event %q: %v", k, ev, err)
			}
		}
		if a.Done() && len(evs) < 2 {
			t.Fatalf("cut at %d: done after %d of 2 elements", k, len(evs))
		}
	}
}

// FuzzGeminiArray_split_never_panics: any input splits without a panic;
// every event is one JSON value; a valid array's events are exactly its
// elements.
func FuzzGeminiArray_split_never_panics(f *testing.F) {
	for _, s := range []string{`[{"a":1},{"b":"},{"}]`, "[{\n}\n,\r\n{}\n]", `[{"a":`, `[`, `[]`, `[1,2]`, `[{"a":"\u00"}]`, "[{\"a\":\"\xff\"}]", `[[[]]]`, `]`} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile(filepath.Join(localFixtureRoot, Gemini, "gemini-2.5-flash-function-call.stream.jsonarray")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !isJSONArray(data) {
			return
		}
		evs, err := SplitTranscript(data)
		for _, ev := range evs {
			if !jsontext.Value(ev).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)) {
				t.Fatalf("event %q is not one JSON value", ev)
			}
		}
		var elems []jsontext.Value
		if json.Unmarshal(bytes.TrimPrefix(bytes.TrimSpace(data), []byte("\ufeff")), &elems, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)) != nil || len(elems) == 0 {
			return
		}
		if err != nil {
			t.Fatalf("valid array %q: %v", data, err)
		}
		if len(evs) != len(elems) {
			t.Fatalf("%d events, the array has %d elements", len(evs), len(elems))
		}
		for i := range evs {
			if !bytes.Equal(evs[i], elems[i]) {
				t.Fatalf("event %d %q, element %q", i, evs[i], elems[i])
			}
		}
	})
}
