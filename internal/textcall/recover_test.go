package textcall

import (
	"strings"
	"testing"
)

type nameArgs struct{ name, args string }

func summary(calls []Call) []nameArgs {
	var out []nameArgs
	for _, c := range calls {
		out = append(out, nameArgs{c.Name, string(c.Arguments)})
	}
	return out
}

func TestRecover_cases(t *testing.T) {
	for _, test := range []struct {
		name     string
		text     string
		want     []nameArgs
		discards int
	}{
		{"plain_prose", "The weather in Paris is {mild} today.", nil, 0},
		{"non_call_json_in_prose", `Config: {"name": "Paris", "population": 2100000}`, nil, 0},
		{"non_call_json_in_fence", "```json\n{\"city\": \"Paris\"}\n```", nil, 0},
		{"nested_wrapper", `{"tool_calls": [{"name": "f", "arguments": {"a": 1}}]}`, []nameArgs{{"f", `{"a":1}`}}, 0},
		{"pretty_printed_nested", "Sure:\n{\n  \"name\": \"f\",\n  \"arguments\": {\n    \"o\": {\"b\": [1, {\"c\": \"}\"}]}\n  }\n}\nDone.", []nameArgs{{"f", `{"o":{"b":[1,{"c":"}"}]}}`}}, 0},
		{"braces_in_strings", `{"name": "f", "arguments": {"re": "\\{[^}]*\\}\"", "q": "{\"name\": \"x\"}"}}`, []nameArgs{{"f", `{"q":"{\"name\": \"x\"}","re":"\\{[^}]*\\}\""}`}}, 0},
		{"truncated_prose_call", `I will call {"name": "f", "arguments": {"a": 1`, nil, 1},
		{"malformed_prose_call", `{"name": "f", "arguments": {"a": 1,}}`, nil, 1},
		{"duplicate_keys_refused", `<tool_call>{"name": "f", "arguments": {"a": 1, "a": 2}}</tool_call>`, nil, 1},
		{"tool_call_not_a_call", `<tool_call>{"city": "Paris"}</tool_call>`, nil, 1},
		{"tool_call_fence", "```tool_call\n{\"name\": \"f\", \"arguments\": {}}\n```", []nameArgs{{"f", `{}`}}, 0},
		{"tool_call_fence_truncated", "```tool_call\n{\"name\": \"f\", \"arguments\": {", nil, 1},
		{"bare_fence", "```\n[{\"name\": \"f\", \"arguments\": {}}, {\"name\": \"g\", \"arguments\": {\"x\": true}}]\n```", []nameArgs{{"f", `{}`}, {"g", `{"x":true}`}}, 0},
		{"mistral_args_marker", `[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}`, []nameArgs{{"get_weather", `{"city":"Paris"}`}}, 0},
		{"mistral_call_id", `[TOOL_CALLS]f[CALL_ID]abc123xyz[ARGS]{"a": 1}`, []nameArgs{{"f", `{"a":1}`}}, 0},
		{"mistral_no_args", `[TOOL_CALLS]f and then nothing`, nil, 1},
		{"python_tag_json", `<|python_tag|>{"name": "f", "parameters": {"a": 1}}; {"name": "g", "parameters": {}}<|eom_id|>`, []nameArgs{{"f", `{"a":1}`}, {"g", `{}`}}, 0},
		{"python_tag_pythonic", `<|python_tag|>brave_search.call(query="weather Paris")<|eom_id|>`, []nameArgs{{"brave_search.call", `{"query":"weather Paris"}`}}, 0},
		{"python_tag_garbage", `<|python_tag|>hello world<|eom_id|>`, nil, 1},
		{"pythonic_in_prose", `Calling [f(a=1, b=[1, 2.5, "x"], c={"k": (1, 2)}, d=-3e2)] now`, []nameArgs{{"f", `{"a":1,"b":[1,2.5,"x"],"c":{"k":[1,2]},"d":-3e2}`}}, 0},
		{"pythonic_positional_is_not_a_call", `See [note(1)] below`, nil, 0},
		{"pythonic_truncated", `[f(a='x'`, nil, 0},
		{"qwen_xml_unterminated", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n", nil, 1},
		{"qwen_xml_missing_parameter_close", "<function=f><parameter=a>x<parameter=b>\n2\n</function>", []nameArgs{{"f", `{"a":"x","b":2}`}}, 0},
		{"deepseek_v31", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"tz\": \"UTC\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>", []nameArgs{{"get_time", `{"tz":"UTC"}`}}, 0},
		{"deepseek_truncated", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": ", nil, 1},
		{"harmony_truncated", `<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": `, nil, 1},
		{"hermes_then_prose_json_not_double_counted", `<tool_call>{"name": "f", "arguments": {}}</tool_call>`, []nameArgs{{"f", `{}`}}, 0},
	} {
		t.Run(test.name, func(t *testing.T) {
			calls, discards := Recover(test.text)
			got := summary(calls)
			if len(got) != len(test.want) {
				t.Fatalf("calls %v, want %v (discards %+v)", got, test.want, discards)
			}
			for i := range got {
				if got[i] != test.want[i] {
					t.Fatalf("call %d = %v, want %v", i, got[i], test.want[i])
				}
			}
			if len(discards) != test.discards {
				t.Fatalf("%d discards %+v, want %d", len(discards), discards, test.discards)
			}
			for _, d := range discards {
				if d.Reason == "" || d.Start < 0 || d.End > len(test.text) || d.Start > d.End {
					t.Fatalf("bad discard %+v", d)
				}
			}
		})
	}
}

func TestRecover_adversarial_input_is_bounded(t *testing.T) {
	for _, test := range []struct{ name, text string }{
		{"deep_nesting", strings.Repeat(`{"a":`, 200_000)},
		{"unclosed_strings", strings.Repeat(`{"`, 300_000)},
		{"brackets", strings.Repeat(`[f(`, 300_000)},
		{"open_markers", strings.Repeat("<tool_call>", 100_000)},
		{"many_fences", strings.Repeat("```\n", 100_000)},
	} {
		t.Run(test.name, func(t *testing.T) {
			calls, discards := Recover(test.text)
			if len(calls) != 0 {
				t.Fatalf("%d calls from junk", len(calls))
			}
			if len(discards) > 2*maxMarkers {
				t.Fatalf("%d discards, want at most %d", len(discards), 2*maxMarkers)
			}
		})
	}
}

func TestRecover_too_long_text_and_too_many_calls(t *testing.T) {
	one := `<tool_call>{"name": "f", "arguments": {}}</tool_call>`
	calls, discards := Recover(strings.Repeat(one, MaxCalls+3))
	if len(calls) != MaxCalls || len(discards) != 3 {
		t.Fatalf("%d calls %d discards, want %d and 3", len(calls), len(discards), MaxCalls)
	}
	_, discards = Recover(strings.Repeat("x", MaxTextBytes+1))
	if len(discards) != 1 || !strings.Contains(discards[0].Reason, "not scanned") {
		t.Fatalf("discards %+v, want one for the unscanned tail", discards)
	}
}

func TestRecover_discard_excerpt_of_invalid_utf8_is_bounded(t *testing.T) {
	for _, text := range []string{
		"<tool_call>" + strings.Repeat("\xaf", 3000),
		"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"" + strings.Repeat("\xaf", 3000),
		"```json\n" + strings.Repeat("\x80", 3000),
	} {
		calls, discards := Recover(text)
		if len(calls) != 0 {
			t.Fatalf("calls %v from invalid text", calls)
		}
		for _, d := range discards {
			if len(d.Excerpt) > 1000 {
				t.Fatalf("excerpt of %d bytes", len(d.Excerpt))
			}
		}
	}
}
