package provider

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitTranscript(t *testing.T) {
	for _, test := range []struct {
		name string
		in   string
		want []string
	}{
		{"sse with event lines and DONE", "event: a\ndata: {\"x\":1}\n\ndata: [DONE]\n\n", []string{`{"x":1}`, "[DONE]"}},
		{"crlf separators", "data: {\"x\":1}\r\n\r\ndata: {\"y\":2}\r\n\r\n", []string{`{"x":1}`, `{"y":2}`}},
		{"padded data lines and no trailing newline", "data: {\"x\":1}      \n\ndata: {\"type\":\"message_stop\" }", []string{`{"x":1}`, `{"type":"message_stop" }`}},
		{"multi-line data joined, comments dropped", ": keepalive\ndata: {\"a\":\ndata: 1}\n\n", []string{"{\"a\":\n1}"}},
		{"data without space", "data:{\"x\":1}\n\n", []string{`{"x":1}`}},
		{"ndjson with blank lines", "{\"a\":1}\n\n{\"b\":2}\r\n", []string{`{"a":1}`, `{"b":2}`}},
	} {
		t.Run(test.name, func(t *testing.T) {
			evs, err := SplitTranscript([]byte(test.in))
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(evs))
			for i, e := range evs {
				got[i] = string(e)
			}
			if !reflect.DeepEqual(got, test.want) {
				t.Errorf("got %q, want %q", got, test.want)
			}
		})
	}
	for _, empty := range []string{"", "\n\n", "event: ping\n\n"} {
		if _, err := SplitTranscript([]byte(empty)); !errors.Is(err, ErrEmptyTranscript) {
			t.Errorf("%q: err %v", empty, err)
		}
	}
}

func TestIsTranscript(t *testing.T) {
	for in, want := range map[string]bool{
		"data: {}\n\n":                  true,
		"event: x\ndata: {}\n\n":        true,
		"{\"a\":1}\n{\"b\":2}\n":        true,
		"{\n  \"a\": 1,\n  \"b\": 2\n}": false,
		"{\"a\":1}":                     false,
		"":                              false,
		"garbage":                       false,
	} {
		if got := IsTranscript([]byte(in)); got != want {
			t.Errorf("IsTranscript(%q) = %v", in, got)
		}
	}
}
