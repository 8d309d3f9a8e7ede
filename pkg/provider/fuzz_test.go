package provider

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var allProviders = []string{OpenAIChat, OpenAIResponses, Anthropic, Gemini, Ollama}

// seedFixtures adds every fixture event (streams) or body (whole) to f with
// the index of its provider.
func seedFixtures(f *testing.F, streamed bool) {
	for i, dir := range allProviders {
		entries, err := os.ReadDir(filepath.Join(fixtureRoot, dir))
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(fixtureRoot, dir, e.Name()))
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
}

// FuzzAccumulator_Add: any event after a stream start with one open call
// never panics, and a rejected event leaves Done and the calls as they were.
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
	})
}

// FuzzParseResponse: any body never panics; a parsed body is Complete.
func FuzzParseResponse(f *testing.F) {
	seedFixtures(f, false)
	f.Fuzz(func(t *testing.T, p uint8, body []byte) {
		r, err := ParseResponse(allProviders[int(p)%len(allProviders)], body)
		if err == nil && !r.Complete {
			t.Fatal("whole body not Complete")
		}
	})
}
