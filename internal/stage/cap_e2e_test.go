package stage

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// chatWithUsage is an OpenAI Chat response proposing calls with finish
// tool_calls and usage.completion_tokens tokens.
func chatWithUsage(rid string, tokens int, calls ...toolCall) []byte {
	var tcs []string
	for i, c := range calls {
		a, _ := json.Marshal(c.args)
		tcs = append(tcs, fmt.Sprintf(`{"id":"call_%s_%d","type":"function","function":{"name":%q,"arguments":%s}}`, rid, i, c.name, a))
	}
	return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[%s]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":20,"completion_tokens":%d,"total_tokens":%d}}`,
		rid, strings.Join(tcs, ","), tokens, 20+tokens)
}

// Before issue 16 the call executed: the history said "arguments are
// complete JSON, so the call goes on".
func TestPipeline_output_at_the_cap_is_truncated_and_never_executes(t *testing.T) {
	p := startPipeline(t)
	p.publish("cap-full", "openai-chat", chatWithUsage("cap-full", 64, toolCall{"get_weather", weatherParis}), streams.HeaderMaxTokens, "64")
	rs := p.waitResults("cap-full", 1)
	if rs[0]["status"] != "failed" || rs[0]["failure"] != "truncated" {
		t.Fatalf("%v: want failed/truncated (no repair model)", rs[0])
	}
	if errs := fmt.Sprint(rs[0]["errors"]); !strings.Contains(errs, "max tokens") || !strings.Contains(errs, "token cap") {
		t.Fatalf("errors %s do not say the output reached the cap", errs)
	}
	if h := fmt.Sprint(rs[0]["history"]); !strings.Contains(h, "truncated") || strings.Contains(h, "goes on") {
		t.Fatalf("history %s: want the truncation recorded", h)
	}
	// One token below the cap the same call runs.
	p.publish("cap-below", "openai-chat", chatWithUsage("cap-below", 63, toolCall{"get_weather", weatherParis}), streams.HeaderMaxTokens, "64")
	if rs := p.waitResults("cap-below", 1); rs[0]["status"] != "executed" {
		t.Fatalf("%v: below the cap, want executed", rs[0])
	}
	if n := p.executed.Load(); n != 1 {
		t.Fatalf("executed %d, want 1 (only the call below the cap)", n)
	}
}

func TestPipeline_atomic_batch_at_the_cap_runs_nothing(t *testing.T) {
	p := startPipeline(t)
	rid := "cap-atomic"
	p.publish(rid, "openai-chat", chatWithUsage(rid, 128, toolCall{"get_weather", weatherParis}, toolCall{"get_weather", `{"city":"Lima"}`}),
		streams.HeaderMaxTokens, "128", streams.HeaderAtomic, "true")
	rs := p.waitResults(rid, 2)
	for _, r := range rs {
		if !(r["status"] == "failed" && r["failure"] == "truncated") && r["status"] != "batch_aborted" {
			t.Fatalf("%v: want failed/truncated or batch_aborted", r)
		}
	}
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("%d calls of an atomic batch at the cap ran", n)
	}
	if n := len(p.results(rid)); n != 2 {
		t.Fatalf("%d results, want one per call", n)
	}
}

// A call written as text in output that reached the cap is truncated too.
func TestPipeline_text_call_at_the_cap_is_truncated(t *testing.T) {
	p := startPipeline(t)
	content, _ := json.Marshal(`<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`)
	body := fmt.Appendf(nil, `{"id":"cap-text","object":"chat.completion","model":"qwen","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":32,"total_tokens":52}}`, content)
	p.publish("cap-text", "openai-chat", body, streams.HeaderMaxTokens, "32", streams.HeaderTolerant, "true")
	rs := p.waitResults("cap-text", 1)
	if rs[0]["status"] != "failed" || rs[0]["failure"] != "truncated" || !strings.Contains(fmt.Sprint(rs[0]["errors"]), "max tokens") {
		t.Fatalf("%v: want failed/truncated with the cap named", rs[0])
	}
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("executed %d, want 0", n)
	}
}
