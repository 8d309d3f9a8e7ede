package textcall

import (
	"testing"
)

// A <function=NAME> block with no <parameter=…> whose body is one JSON
// object carries that object as its arguments (inside <tool_call>, where
// hermes hands it to qwen-xml); other text there is a Discard, not a call
// with {} arguments.
func TestRecover_function_block_without_parameters_keeps_or_discards_its_body(t *testing.T) {
	checkCases(t, []fixCase{
		{"json_body_in_tool_call", `<tool_call><function=f>{"a":1}</function></tool_call>`, []nameArgs{{"f", `{"a":1}`}}, 0},
		{"json_body_with_newlines", "<tool_call>\n<function=f>\n{\"a\": [1, 2]}\n</function>\n</tool_call>", []nameArgs{{"f", `{"a":[1,2]}`}}, 0},
		{"empty_body", `<tool_call><function=f></function></tool_call>`, []nameArgs{{"f", `{}`}}, 0},
		{"text_body_in_tool_call", `<tool_call><function=f>a=1</function></tool_call>`, nil, 1},
		{"text_body_bare", "<function=f>\nlook it up\n</function>", nil, 1},
		{"json_then_text", `<tool_call><function=f>{"a":1} and more</function></tool_call>`, nil, 1},
		{"truncated_json_body", `<tool_call><function=f>{"a":</function></tool_call>`, nil, 1},
	})
	calls, _ := Recover(`<tool_call><function=f>{"a":1}</function></tool_call>`)
	if len(calls) != 1 || calls[0].Format != "qwen-xml" {
		t.Fatalf("calls %+v, want one qwen-xml call", calls)
	}
}
