package provider

import (
	"bytes"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/canon"
	"github.com/toolgate/toolgate/internal/parse"
)

var allProviders = Names()

// seedFixtures adds every fixture event (streams) or body (whole) to f with
// the index of its provider.
func seedFixtures(f *testing.F, streamed bool) {
	for i, dir := range allProviders {
		entries, err := os.ReadDir(fixtureDir(dir))
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(fixtureDir(dir), e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			if isWhole := strings.HasSuffix(e.Name(), ".json"); isWhole != streamed {
				f.Add(uint8(i), data)
				continue
			}
			if evs, err := SplitTranscript(data); err == nil && streamed {
				for _, ev := range evs {
					f.Add(uint8(i), ev)
				}
			}
		}
	}
}

// openPrefix is a valid stream start with one call under way, per provider.
var openPrefix = map[string][]string{
	OpenAIChat:      {`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\":"}}]}}]}`},
	OpenAIResponses: {`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"i","call_id":"a","name":"f","arguments":""}}`},
	Anthropic: {`{"type":"message_start","message":{"id":"m","content":[]}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"f","input":{}}}`},
	Gemini: {`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}`},
	Ollama: {`{"message":{"tool_calls":[{"function":{"name":"f","arguments":{}}}]},"done":false}`},
	BedrockConverse: {`{"messageStart":{"role":"assistant"}}`,
		`{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"a","name":"f"}}}}`},
	Cohere: {`{"type":"message-start","id":"m","delta":{"message":{"role":"assistant"}}}`,
		`{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":"}}}}}`},
	GeminiInteractions: {`{"event_type":"interaction.created","interaction":{"id":"i","status":"in_progress"}}`,
		`{"event_type":"step.start","index":0,"step":{"type":"function_call","id":"a","name":"f","arguments":{}}}`,
		`{"event_type":"step.delta","index":0,"delta":{"type":"arguments_delta","arguments":"{\"x\":"}}`},
}

// FuzzAccumulator_Add: any event after a stream start with one open call
// never panics, a rejected event leaves Done and the calls as they were, and
// an accepted one adds no U+FFFD it did not hold.
func FuzzAccumulator_Add(f *testing.F) {
	seedFixtures(f, true)
	f.Fuzz(func(t *testing.T, p uint8, ev []byte) {
		provider := allProviders[int(p)%len(allProviders)]
		a, _ := NewAccumulator(provider)
		for _, pre := range openPrefix[provider] {
			if err := a.Add([]byte(pre)); err != nil {
				t.Fatalf("prefix: %v", err)
			}
		}
		before := a.Response()
		if err := a.Add(ev); err != nil {
			after := a.Response()
			if after.Complete != before.Complete || !reflect.DeepEqual(after.Calls, before.Calls) {
				t.Fatalf("rejected event changed the accumulator: %v", err)
			}
			return
		}
		r := a.Response()
		if r.Complete != a.Done() {
			t.Fatal("Complete differs from Done")
		}
		for i, c := range r.Calls {
			if c.Index != i {
				t.Fatalf("call %d has Index %d", i, c.Index)
			}
		}
		_ = a.Progress()
		noNewReplacement(t, ev, r)
	})
}

// FuzzParseResponse: any body never panics; a parsed body is Complete; no
// U+FFFD appears in arguments or text that the body did not hold itself or
// as an escape.
func FuzzParseResponse(f *testing.F) {
	seedFixtures(f, false)
	f.Add(uint8(0), []byte("{\"choices\":[{\"index\":0,\"message\":{\"content\":\"\xff\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"a\":\"\\ud800\"}}}]}}]}"))
	f.Add(uint8(2), []byte("{\"content\":[{\"type\":\"tool_use\",\"name\":\"f\",\"input\":{\"a\":\"\xff\"}}],\"stop_reason\":\"tool_use\"}"))
	f.Fuzz(func(t *testing.T, p uint8, body []byte) {
		r, err := ParseResponse(allProviders[int(p)%len(allProviders)], body)
		if err != nil {
			return
		}
		if !r.Complete {
			t.Fatal("whole body not Complete")
		}
		noNewReplacement(t, body, r)
	})
}

// replacements counts what may legitimately become U+FFFD: the character
// itself and every spelling of its escape.
func replacements(b []byte) int {
	return bytes.Count(b, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(b), []byte("ufffd"))
}

func noNewReplacement(t *testing.T, in []byte, r Response) {
	t.Helper()
	had := replacements(in)
	if n := strings.Count(r.Text, "\uFFFD"); n > had {
		t.Fatalf("text %q has %d U+FFFD, the input %d", r.Text, n, had)
	}
	for _, c := range r.Calls {
		if n := strings.Count(c.Arguments, "\uFFFD"); n > had {
			t.Fatalf("arguments %q have %d U+FFFD, the input %d", c.Arguments, n, had)
		}
	}
}

// quoteExact writes b as a JSON string literal, escaping only what JSON
// requires, so invalid UTF-8 in b reaches the decoder as raw bytes.
func quoteExact(b []byte) []byte {
	out := []byte{'"'}
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < 0x20:
			out = append(out, fmt.Sprintf(`\u%04x`, c)...)
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

// FuzzArguments_are_exact: a call's arguments are byte-identical to what the
// body encoded (a JSON string's content; an object's canonical form), or —
// for an object that is not exact UTF-8 — its bytes as sent, which the
// parse gate refuses as invalid_json. Nothing is replaced. Each provider's
// body is testdata/exact/<provider>.json, its arguments @STRING@ (a JSON
// string) or @OBJECT@ (an object).
func FuzzArguments_are_exact(f *testing.F) {
	for _, s := range []string{`{"city":"Paris"}`, "{\"city\":\"Par\xffis\"}", `{"city":"\ud800"}`, `{"a":"\ud83d\ude00","b":[1.50]}`, `{"a":1,"a":2}`, "\xed\xa0\x80", ``} {
		for p := range allProviders {
			f.Add(uint8(p), []byte(s))
		}
	}
	exactBodies := map[string]string{}
	for _, p := range allProviders {
		if b, err := os.ReadFile(filepath.Join("testdata", "exact", p+".json")); err == nil {
			exactBodies[p] = strings.TrimSpace(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, p uint8, args []byte) {
		prov := allProviders[int(p)%len(allProviders)]
		tmpl, ok := exactBodies[prov]
		if !ok {
			t.Fatalf("no testdata/exact/%s.json: a provider needs a body with its arguments as @STRING@ or @OBJECT@", prov)
		}
		object := strings.Contains(tmpl, "@OBJECT@")
		if object {
			if len(args) == 0 || args[0] != '{' || !jsontext.Value(args).IsValid(jsontext.AllowInvalidUTF8(true)) {
				return
			}
		}
		body := strings.Replace(strings.Replace(tmpl, "@STRING@", string(quoteExact(args)), 1), "@OBJECT@", string(args), 1)
		r, err := ParseResponse(prov, []byte(body))
		if object && !jsontext.Value(args).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(false)) {
			if !errors.Is(err, ErrDuplicateKey) {
				t.Fatalf("duplicate keys in %q: err %v, want ErrDuplicateKey", args, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		if len(r.Calls) != 1 {
			t.Fatalf("got %d calls", len(r.Calls))
		}
		got := []byte(r.Calls[0].Arguments)
		want := args
		if object { // the object's bytes: whitespace after it is the body's, not the value's
			want = bytes.TrimRight(args, " \t\r\n")
		}
		if object && jsontext.Value(args).IsValid() {
			if want, err = canon.JSON(args); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("arguments %q, the body encoded %q", got, want)
		}
		if !utf8.Valid(got) {
			if _, _, perr := parse.Strict(got, parse.Limits{}); perr == nil || perr.Code != parse.CodeInvalidJSON && perr.Code != parse.CodeTruncated {
				t.Fatalf("arguments %q are not UTF-8, parse says %v; want invalid_json", got, perr)
			}
		}
		noNewReplacement(t, []byte(body), r)
	})
}
