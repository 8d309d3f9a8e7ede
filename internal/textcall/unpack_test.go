package textcall

import (
	"testing"

	"github.com/toolgate/toolgate/internal/canon"
	"github.com/toolgate/toolgate/internal/parse"
)

func TestUnpack_spellings(t *testing.T) {
	for _, test := range []struct {
		name, in string
		wantName string
		wantArgs string
		ok       bool
	}{
		{"name_arguments", `{"name": "f", "arguments": {"a": 1}}`, "f", `{"a":1}`, true},
		{"tool_args", `{"tool": "f", "args": {"a": 1}}`, "f", `{"a":1}`, true},
		{"tool_name_parameters", `{"tool_name": "f", "parameters": {"a": 1}}`, "f", `{"a":1}`, true},
		{"function_string_input", `{"function": "f", "input": {"a": 1}}`, "f", `{"a":1}`, true},
		{"params", `{"name": "f", "params": {"a": 1}}`, "f", `{"a":1}`, true},
		{"openai_function_object", `{"type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}`, "f", `{"a":1}`, true},
		{"function_object_top_args", `{"function": {"name": "f"}, "parameters": {"a": 1}}`, "f", `{"a":1}`, true},
		{"stringified_decoded_once", `{"name": "f", "arguments": "{\"s\": \"{\\\"x\\\": 1}\"}"}`, "f", `{"s":"{\"x\": 1}"}`, true},
		{"arguments_priority_over_parameters", `{"name": "f", "parameters": {"p": 1}, "arguments": {"a": 1}}`, "f", `{"a":1}`, true},
		{"absent_arguments_are_empty", `{"name": "f"}`, "f", `{}`, true},
		{"null_arguments_are_empty", `{"name": "f", "arguments": null}`, "f", `{}`, true},
		{"empty_string_arguments_are_empty", `{"name": "f", "arguments": ""}`, "f", `{}`, true},
		{"argument_named_name", `{"arguments": {"name": "John"}, "name": "get_age"}`, "get_age", `{"name":"John"}`, true},
		{"no_name", `{"arguments": {"a": 1}}`, "", "", false},
		{"empty_name", `{"name": "", "arguments": {}}`, "", "", false},
		{"name_not_string", `{"name": 3, "arguments": {}}`, "", "", false},
		{"arguments_array", `{"name": "f", "arguments": [1]}`, "", "", false},
		{"arguments_string_not_json", `{"name": "f", "arguments": "city=Paris"}`, "", "", false},
		{"arguments_string_array", `{"name": "f", "arguments": "[1]"}`, "", "", false},
		{"arguments_string_truncated", `{"name": "f", "arguments": "{\"a\": 1"}`, "", "", false},
		{"not_object", `["f"]`, "", "", false},
	} {
		t.Run(test.name, func(t *testing.T) {
			v, _, err := parse.Value([]byte(test.in), parse.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			name, args, reason := unpack(v)
			ok := reason == ""
			if ok != test.ok {
				t.Fatalf("unpack(%s) ok = %v (%s), want %v", test.in, ok, reason, test.ok)
			}
			if !ok {
				return
			}
			c, _ := canon.Value(args)
			if name != test.wantName || string(c) != test.wantArgs {
				t.Fatalf("unpack(%s) = %s %s, want %s %s", test.in, name, c, test.wantName, test.wantArgs)
			}
		})
	}
}
