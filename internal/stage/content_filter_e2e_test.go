package stage

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// Output a provider's content filter stopped never runs: its native calls
// are withheld (a response-level rejected result, a dead letter), and with
// Toolgate-Tolerant its text is not searched for calls either. Before, the
// openai-chat call executed, and Bedrock's withheld calls could come back
// through the recovery of its text.
func TestPipeline_content_filtered_output_never_executes(t *testing.T) {
	p := startPipeline(t)
	p.publish("cf-native", "openai-chat", []byte(`{"id":"cf-native","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"content_filter"}]}`))
	p.publish("cf-text", "bedrock-converse", []byte(`{"output":{"message":{"role":"assistant","content":[{"text":"<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>"},{"toolUse":{"toolUseId":"tu_1","name":"get_weather","input":{"city":"Paris"}}}]}},"stopReason":"guardrail_intervened","usage":{"inputTokens":10,"outputTokens":20,"totalTokens":30}}`),
		streams.HeaderTolerant, "true")
	for _, rid := range []string{"cf-native", "cf-text"} {
		rs := p.waitResults(rid, 1)
		if rs[0]["status"] != "rejected" || !strings.Contains(strings.ToLower(joinErrors(rs[0])), "withheld") {
			t.Fatalf("%s: %v, want a response-level rejected result saying the calls were withheld", rid, rs[0])
		}
	}
	p.allSettled()
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("%d content-filtered calls executed", n)
	}
	for _, rid := range []string{"cf-native", "cf-text"} {
		if rs := p.results(rid); len(rs) != 1 {
			t.Fatalf("%s: %d results, want only the response-level one", rid, len(rs))
		}
	}
}

func joinErrors(r map[string]any) string {
	var b strings.Builder
	if errs, ok := r["errors"].([]any); ok {
		for _, e := range errs {
			s, _ := e.(string)
			b.WriteString(s + "; ")
		}
	}
	s, _ := r["text"].(string)
	return b.String() + s
}
