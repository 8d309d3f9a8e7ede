package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const benchEvents = 200

// benchArgs is an argument object of about 8 bytes per fragment.
func benchArgs(fragments int) string {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < fragments*8-4; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"é%03d"`, i%1000)
	}
	b.WriteString(`]}`)
	return b.String()
}

// split cuts s into n pieces of near-equal byte length (mid-rune is fine).
func split(s string, n int) []string {
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, s[i*len(s)/n:(i+1)*len(s)/n])
	}
	return out
}

// quote writes s as a JSON string keeping its bytes raw, as a server that
// splits a token mid-UTF-8 does (json.Marshal would write U+FFFD).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// benchStreams builds one 200-event stream per provider, arguments split
// across most of the events in that provider's own delta format.
func benchStreams() map[string][]string {
	streams := map[string][]string{}
	args := benchArgs(benchEvents)

	ev := []string{`{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"create_report","arguments":""}}]},"finish_reason":null}]}`}
	for _, p := range split(args, benchEvents-2) {
		ev = append(ev, `{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`+quote(p)+`}}]},"finish_reason":null}]}`)
	}
	streams[OpenAIChat] = append(ev, `{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"completion_tokens":300}}`)

	ev = []string{`{"type":"response.created","response":{"id":"r","model":"m","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"call_1","name":"create_report","arguments":""}}`}
	for _, p := range split(args, benchEvents-4) {
		ev = append(ev, `{"type":"response.function_call_arguments.delta","item_id":"fc","output_index":0,"delta":`+quote(p)+`}`)
	}
	ev = append(ev, `{"type":"response.function_call_arguments.done","item_id":"fc","output_index":0,"arguments":`+quote(args)+`}`)
	streams[OpenAIResponses] = append(ev, `{"type":"response.completed","response":{"id":"r","status":"completed","output":[],"usage":{"output_tokens":300}}}`)

	ev = []string{`{"type":"message_start","message":{"id":"m","model":"c","content":[],"stop_reason":null}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"create_report","input":{}}}`}
	for _, p := range split(args, benchEvents-5) {
		ev = append(ev, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+quote(p)+`}}`)
	}
	streams[Anthropic] = append(ev, `{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":300}}`, `{"type":"message_stop"}`)

	ev = []string{`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"create_report","willContinue":true}}]}}]}`}
	for i, p := range split(strings.Repeat("report ", benchEvents*8/7), benchEvents-2) {
		ev = append(ev, fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.sections[%d].text","stringValue":%s,"willContinue":true}],"willContinue":true}}]}}]}`, i/10, quote(p)))
	}
	streams[Gemini] = append(ev, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{}}]},"finishReason":"STOP"}],"usageMetadata":{"candidatesTokenCount":300}}`)

	// Ollama streams text token by token and each call whole.
	ev = nil
	for _, p := range split(args, benchEvents-2) {
		ev = append(ev, `{"model":"m","message":{"role":"assistant","content":`+quote(p)+`},"done":false}`)
	}
	streams[Ollama] = append(ev, `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"create_report","arguments":`+args+`}}]},"done":false}`,
		`{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":300}`)

	ev = []string{`{"messageStart":{"role":"assistant"}}`,
		`{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t","name":"create_report"}}}}`}
	for _, p := range split(args, benchEvents-5) {
		ev = append(ev, `{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":`+quote(p)+`}}}}`)
	}
	streams[BedrockConverse] = append(ev, `{"contentBlockStop":{"contentBlockIndex":0}}`, `{"messageStop":{"stopReason":"tool_use"}}`,
		`{"metadata":{"usage":{"inputTokens":10,"outputTokens":300,"totalTokens":310},"metrics":{"latencyMs":1}}}`)

	ev = []string{`{"id":"c","type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}`,
		`{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"c1","type":"function","function":{"name":"create_report","arguments":""}}}}}`}
	for _, p := range split(args, benchEvents-4) {
		ev = append(ev, `{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":`+quote(p)+`}}}}}`)
	}
	streams[Cohere] = append(ev, `{"type":"tool-call-end","index":0}`,
		`{"type":"message-end","delta":{"finish_reason":"TOOL_CALL","usage":{"tokens":{"output_tokens":300}}}}`)
	return streams
}

func TestBenchStreams_are_200_events_and_assemble(t *testing.T) {
	for p, evs := range benchStreams() {
		if len(evs) != benchEvents {
			t.Errorf("%s: %d events", p, len(evs))
		}
		strs := make([]string, len(evs))
		copy(strs, evs)
		r := feed(t, p, strs...).Response()
		if !r.Complete || len(r.Calls) != 1 || r.Calls[0].Name != "create_report" || r.Calls[0].Truncated || !json.Valid([]byte(r.Calls[0].Arguments)) {
			t.Errorf("%s: %+v", p, r)
		}
		if p != Gemini && p != Ollama && r.Calls[0].Arguments != benchArgs(benchEvents) {
			t.Errorf("%s: arguments differ from the split text", p)
		}
	}
}

func BenchmarkAccumulator_200_events(b *testing.B) {
	streams := benchStreams()
	for _, p := range allProviders {
		evs := make([][]byte, len(streams[p]))
		for i, e := range streams[p] {
			evs[i] = []byte(e)
		}
		b.Run(p, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a, _ := NewAccumulator(p)
				for _, e := range evs {
					if err := a.Add(e); err != nil {
						b.Fatal(err)
					}
				}
				if r := a.Response(); !r.Complete {
					b.Fatal("incomplete")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
		})
	}
}
