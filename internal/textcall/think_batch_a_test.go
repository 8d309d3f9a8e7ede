package textcall

import "testing"

// A call a batch-A model drafts inside its reasoning and then emits for
// real is one call; a draft whose section never closes inside the
// reasoning does not swallow the real call after it.
func TestRecover_batch_a_draft_in_reasoning_then_the_real_call_is_one_call(t *testing.T) {
	kimi := "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\":1}<|tool_call_end|><|tool_calls_section_end|>"
	seed := "<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call>"
	glm := "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>"
	dsml := "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"false\">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
	olmo := "<function_calls>\nf(a=1)\n</function_calls>"
	for _, test := range []struct{ name, text string }{
		{"kimi", "<think>I could write " + kimi + " now.</think>" + kimi},
		{"kimi_unclosed_draft", "<think>Draft: <|tool_calls_section_begin|><|tool_call_begin|>functions.f:0</think>" + kimi},
		{"kimi_unclosed_draft_then_hermes", "<think>Draft: <|tool_calls_section_begin|><|tool_call_begin|>functions.f:0</think><tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>"},
		{"olmo3_unclosed_draft_then_hermes", "<think>Maybe <function_calls>\nf(a=2)</think><tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>"},
		{"seed", "<seed:think>Plan: " + seed + "</seed:think>" + seed},
		{"seed_unclosed_draft", "<seed:think>Plan: <seed:tool_call>\n<function=f></seed:think>" + seed},
		{"glm", "<think>" + glm + "</think>\n" + glm},
		{"deepseek_v32", "I will call it: " + dsml + "</think>\n" + dsml},
		{"olmo3", "<think>" + olmo + "</think>\n" + olmo},
	} {
		t.Run(test.name, func(t *testing.T) {
			calls, _ := Recover(test.text)
			if len(calls) != 1 || calls[0].Name != "f" || string(calls[0].Arguments) != `{"a":1}` {
				t.Fatalf("calls %v, want exactly f {\"a\":1}", summary(calls))
			}
		})
	}
}
