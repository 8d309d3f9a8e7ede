package textcall

import (
	"strings"
	"testing"
)

// Hermes-2-Pro writes its call as a Python dict, as its system prompt shows:
// read by a strict literal reader when JSON fails, and nothing but Python's
// literals is accepted.
func TestRecover_hermes_python_dict_calls(t *testing.T) {
	checkCases(t, []fixCase{
		{"dict", `<tool_call>{'name': 'f', 'arguments': {'a': 1}}</tool_call>`, []nameArgs{{"f", `{"a":1}`}}, 0},
		{"prompt_order_and_literals", "<tool_call>\n{'arguments': {'s': \"it's\", 'n': -2.5, 'ok': True, 'no': False, 'x': None, 'l': [1, 'b', {'k': []}],}, 'name': 'f'}\n</tool_call>",
			[]nameArgs{{"f", `{"l":[1,"b",{"k":[]}],"n":-2.5,"no":false,"ok":true,"s":"it's","x":null}`}}, 0},
		{"escapes", `<tool_call>{'name': 'f', 'arguments': {'s': '\x41\u00e9\n\'q\' \\d \101'}}</tool_call>`, []nameArgs{{"f", `{"s":"Aé\n'q' \\d A"}`}}, 0},
		{"line_continuation", "<tool_call>{'name': 'f', 'arguments': {'s': 'a\\\nb'}}</tool_call>", []nameArgs{{"f", `{"s":"ab"}`}}, 0},
		{"list_of_dicts", `<tool_call>[{'name': 'f', 'arguments': {}}, {'name': 'g', 'arguments': {'a': 'x'}}]</tool_call>`, []nameArgs{{"f", `{}`}, {"g", `{"a":"x"}`}}, 0},
		{"json_words_are_not_python", `<tool_call>{'name': 'f', 'arguments': {'a': true}}</tool_call>`, nil, 1},
		{"tuple", `<tool_call>{'name': 'f', 'arguments': {'a': (1, 2)}}</tool_call>`, nil, 1},
		{"expression", `<tool_call>{'name': 'f', 'arguments': {'a': 1 + 2}}</tool_call>`, nil, 1},
		{"name", `<tool_call>{'name': 'f', 'arguments': {'a': os.environ}}</tool_call>`, nil, 1},
		{"call", `<tool_call>{'name': 'f', 'arguments': {'a': open('x')}}</tool_call>`, nil, 1},
		{"set", `<tool_call>{'name': 'f', 'arguments': {1, 2}}</tool_call>`, nil, 1},
		{"non_string_key", `<tool_call>{'name': 'f', 'arguments': {1: 'a'}}</tool_call>`, nil, 1},
		{"string_prefix", `<tool_call>{'name': 'f', 'arguments': {'a': b'x'}}</tool_call>`, nil, 1},
		{"named_escape", `<tool_call>{'name': 'f', 'arguments': {'a': '\N{BULLET}'}}</tool_call>`, nil, 1},
		{"duplicate_key", `<tool_call>{'name': 'f', 'arguments': {'a': 1, 'a': 2}}</tool_call>`, nil, 1},
		{"truncated", `<tool_call>{'name': 'f', 'arguments': {'a': 'x`, nil, 1},
		{"unclosed_dict", "<tool_call>{'name': 'f', 'arguments': {'a': 1}", nil, 1},
	})
	_, discards := Recover(`<tool_call>{'name': 'f', 'arguments': {'a': true}}</tool_call>`)
	if len(discards) != 1 || !strings.Contains(discards[0].Reason, "Python literal") {
		t.Fatalf("discards %+v, want one that names the Python literal", discards)
	}
}

// Kimi K2's arguments written as a Python dict are read by the same reader.
func TestRecover_kimi_python_dict_arguments(t *testing.T) {
	const call = "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>%s<|tool_call_end|><|tool_calls_section_end|>"
	checkCases(t, []fixCase{
		{"python_dict", strings.Replace(call, "%s", `{'q': 'x', 'n': 1, 'flag': False}`, 1), []nameArgs{{"f", `{"flag":false,"n":1,"q":"x"}`}}, 0},
		{"json_still_json", strings.Replace(call, "%s", `{"q": "x"}`, 1), []nameArgs{{"f", `{"q":"x"}`}}, 0},
		{"python_expression", strings.Replace(call, "%s", `{'q': x}`, 1), nil, 1},
		{"python_list_is_not_arguments", strings.Replace(call, "%s", `['q']`, 1), nil, 1},
		{"python_dict_then_text", strings.Replace(call, "%s", `{'q': 'x'} extra`, 1), nil, 1},
	})
}
