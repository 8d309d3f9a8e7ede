package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// publishCapped publishes one whole body (events nil) or a stream, with
// Toolgate-Max-Tokens and Toolgate-Tolerant as a producer sets them.
func publishCapped(t *testing.T, r *streamRig, rid string, maxTokens int, body []byte, events [][]byte) {
	t.Helper()
	msg := func(subject string, data []byte) *nats.Msg {
		m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
		m.Header.Set(streams.HeaderProvider, provider.OpenAIChat)
		m.Header.Set(streams.HeaderResponseID, rid)
		m.Header.Set(streams.HeaderMaxTokens, strconv.Itoa(maxTokens))
		m.Header.Set(streams.HeaderTolerant, "true")
		return m
	}
	var ms []*nats.Msg
	if events == nil {
		ms = append(ms, msg(streams.SubjectInResponse, body))
	}
	for i, ev := range events {
		m := msg(streams.InStream(rid), ev)
		m.Header.Set(streams.HeaderSeq, strconv.Itoa(i+1))
		ms = append(ms, m)
	}
	for _, m := range ms {
		if _, err := r.js.PublishMsg(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// The cap must reach parse on every envelope of a response at the cap —
// the native calls of a stream and the carrier of text to recover — so
// that parse ends them truncated (before issue 16 the carrier had no hint
// and its recovered calls executed).
func TestAccumulate_output_at_the_cap_marks_every_envelope(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, 5*time.Second), nil)
	text, _ := json.Marshal(`<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`)
	whole := func(tokens int) []byte {
		return fmt.Appendf(nil, `{"id":"x","object":"chat.completion","model":"qwen","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":%d,"total_tokens":%d}}`, text, tokens, tokens+5)
	}
	stream := [][]byte{
		[]byte(`{"id":"s","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}}]}`),
		// Usage on the finishing chunk, as vLLM and llama.cpp send it. (A
		// usage-only chunk after it is not read: the stream is assembled
		// at finish_reason; see the issue-16 report.)
		[]byte(`{"id":"s","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":16,"total_tokens":21}}`),
		[]byte(`[DONE]`),
	}
	publishCapped(t, r, "cap-text", 32, whole(32), nil)
	publishCapped(t, r, "cap-text-below", 32, whole(31), nil)
	publishCapped(t, r, "cap-stream", 16, nil, stream)
	for rid, want := range map[string]string{"cap-text": "max tokens (32)", "cap-text-below": "", "cap-stream": "max tokens"} {
		testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
			if len(r.parsedFor(rid)) == 0 {
				return fmt.Errorf("%s did not reach parse", rid)
			}
			return nil
		})
		e := r.parsedFor(rid)[0]
		if want == "" && e.TruncatedHint != "" || !strings.Contains(e.TruncatedHint, want) {
			t.Errorf("%s: hint %q, want %q", rid, e.TruncatedHint, want)
		}
		if strings.HasPrefix(rid, "cap-text") != e.Carrier {
			t.Errorf("%s: carrier %v", rid, e.Carrier)
		}
	}
}
