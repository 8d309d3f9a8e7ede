package textcall

import (
	"strings"
	"testing"
)

// A call a batch-B model drafts inside its reasoning and then emits for
// real is one call; a draft left unclosed inside the reasoning does not
// swallow the real call after it.
func TestRecover_batch_b_draft_in_reasoning_then_the_real_call_is_one_call(t *testing.T) {
	hermes := `<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>`
	for _, test := range []struct{ name, call string }{
		{"minimax", "<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n</minimax:tool_call>"},
		{"invoke", "<function_calls>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n</function_calls>"},
		{"step3", "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\"><steptml:parameter name=\"a\">1</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>"},
		{"granite", `<|tool_call|>[{"name": "f", "arguments": {"a": 1}}]`},
		{"phi4-mini", `functools[{"name": "f", "arguments": {"a": 1}}]`},
		{"jamba", `<tool_calls>[{"name": "f", "arguments": {"a": 1}}]</tool_calls>`},
		{"longcat", `<longcat_tool_call>{"name": "f", "arguments": {"a": 1}}</longcat_tool_call>`},
		{"cohere", `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": 1}}]<|END_ACTION|>`},
		{"internlm", `<|action_start|><|plugin|>{"name": "f", "parameters": {"a": 1}}<|action_end|>`},
		{"llama4", "<|python_start|>[f(a=1)]<|python_end|>"},
		{"functionary", ">>>f\n{\"a\": 1}"},
		{"llama3-function", `<function=f>{"a": 1}</function>`},
		{"qwen-agent", "✿FUNCTION✿: f\n✿ARGS✿: {\"a\": 1}\n✿RESULT✿"},
		{"gigachat", "function call<|role_sep|>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}"},
		{"minicpm", "<|tool_call_start|>\nf(a=1)\n<|tool_call_end|>"},
	} {
		t.Run(test.name, func(t *testing.T) {
			for _, text := range []string{
				"<think>I could write " + test.call + " now.</think>\n" + test.call,
				"<think>Draft: " + test.call[:len(test.call)*2/3] + "</think>\n" + hermes,
			} {
				calls, _ := Recover(text)
				if len(calls) != 1 || calls[0].Name != "f" || string(calls[0].Arguments) != `{"a":1}` {
					t.Fatalf("%q: calls %v, want exactly f {\"a\":1}", text, summary(calls))
				}
				if strings.Contains(text, hermes) && calls[0].Format != "hermes" {
					t.Fatalf("%q: the call is %s's, want the real hermes call", text, calls[0].Format)
				}
			}
		})
	}
}
