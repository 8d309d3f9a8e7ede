package stage

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/streams"
)

// chatStreamAtCap is an OpenAI Chat stream as the API sends it with
// stream_options.include_usage: the call's chunks, the finish chunk without
// usage, then the usage-only chunk (choices empty) and, when done, [DONE].
func chatStreamAtCap(rid string, tokens int, done bool) [][]byte {
	evs := [][]byte{
		fmt.Appendf(nil, `{"id":%q,"object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_%s","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}],"usage":null}`, rid, rid),
		fmt.Appendf(nil, `{"id":%q,"object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}],"usage":null}`, rid),
		fmt.Appendf(nil, `{"id":%q,"object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`, rid),
		fmt.Appendf(nil, `{"id":%q,"object":"chat.completion.chunk","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":%d,"total_tokens":%d}}`, rid, tokens, 20+tokens),
	}
	if done {
		evs = append(evs, []byte("[DONE]"))
	}
	return evs
}

func (p *pipe) publishCapped(rid string, maxTokens int, events [][]byte) {
	p.t.Helper()
	for i, ev := range events {
		m := nats.NewMsg(streams.InStream(rid))
		m.Data = ev
		m.Header.Set(streams.HeaderProvider, "openai-chat")
		m.Header.Set(streams.HeaderResponseID, rid)
		m.Header.Set(streams.HeaderMaxTokens, strconv.Itoa(maxTokens))
		m.Header.Set(streams.HeaderSeq, strconv.Itoa(i+1))
		if _, err := p.js.PublishMsg(p.ctx, m); err != nil {
			p.t.Fatal(err)
		}
	}
}

// The usage of an OpenAI Chat stream arrives after its finish chunk. Before,
// the stream was assembled at the finish, its usage never read, and a call
// whose output reached Toolgate-Max-Tokens executed; now the usage-only
// chunk ends a capped stream (with or without [DONE]) and the call is
// truncated, while one below the cap still runs.
func TestPipeline_stream_output_at_the_cap_is_truncated_when_usage_follows_the_finish(t *testing.T) {
	p := startPipeline(t)
	p.publishCapped("capstream-done", 64, chatStreamAtCap("capstream-done", 64, true))
	p.publishCapped("capstream-nodone", 64, chatStreamAtCap("capstream-nodone", 64, false))
	for _, rid := range []string{"capstream-done", "capstream-nodone"} {
		rs := p.waitResults(rid, 1)
		if rs[0]["status"] != "failed" || rs[0]["failure"] != "truncated" {
			t.Fatalf("%s: %v, want failed/truncated (output reached the cap; no repair model)", rid, rs[0])
		}
	}
	p.publishCapped("capstream-below", 64, chatStreamAtCap("capstream-below", 63, true))
	if rs := p.waitResults("capstream-below", 1); rs[0]["status"] != "executed" {
		t.Fatalf("below the cap: %v, want executed", rs[0])
	}
	if n := p.executed.Load(); n != 1 {
		t.Fatalf("executed %d, want 1 (only the stream below the cap)", n)
	}
}
