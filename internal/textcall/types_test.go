package textcall

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTypeArgs_values_follow_the_declared_types(t *testing.T) {
	for _, test := range []struct {
		name     string
		text     string
		declared []string
		want     string // the canonical arguments object {"v": ...}
		note     string // substring of the conversion note; "" for none
	}{
		{"zip_string_stays_string", "94107", []string{"string"}, `{"v":"94107"}`, "v: kept as string (schema type string)"},
		{"one_string_stays_string", "1", []string{"string"}, `{"v":"1"}`, "kept as string"},
		{"true_string_stays_string", "true", []string{"string"}, `{"v":"true"}`, "kept as string"},
		{"null_string_stays_string", "null", []string{"string"}, `{"v":"null"}`, "kept as string"},
		{"object_text_for_a_string", `{"a": 1}`, []string{"string"}, `{"v":"{\"a\": 1}"}`, "kept as string"},
		{"plain_text_no_note", "Paris", []string{"string"}, `{"v":"Paris"}`, ""},
		{"integer", "1", []string{"integer"}, `{"v":1}`, "v: read as integer (schema type integer)"},
		{"integer_not_a_number", "abc", []string{"integer"}, `{"v":"abc"}`, "kept as string: the text does not read as integer"},
		{"integer_with_fraction", "1.5", []string{"integer"}, `{"v":"1.5"}`, "does not read as integer"},
		{"integer_whole_float", "2.0", []string{"integer"}, `{"v":2.0}`, "read as integer"},
		{"number", "15.5", []string{"number"}, `{"v":15.5}`, "read as number"},
		{"boolean", "True", []string{"boolean"}, `{"v":true}`, "read as boolean"},
		{"boolean_garbage", "yes", []string{"boolean"}, `{"v":"yes"}`, "kept as string"},
		{"null", "null", []string{"null"}, `{"v":null}`, "read as null"},
		{"union_string_null_null", "null", []string{"string", "null"}, `{"v":null}`, "read as null (schema type string|null)"},
		{"union_string_null_text", "94107", []string{"string", "null"}, `{"v":"94107"}`, "kept as string (schema type string|null)"},
		{"union_integer_string", "7", []string{"string", "integer"}, `{"v":7}`, "read as integer"},
		{"object", "{\"radius\": 15.5}", []string{"object"}, `{"v":{"radius":15.5}}`, "read as object"},
		{"array", "[1, \"a\"]", []string{"array"}, `{"v":[1,"a"]}`, "read as array"},
		{"array_garbage", "[1,", []string{"array"}, `{"v":"[1,"}`, "kept as string"},
		{"undeclared_number_keeps_its_text", "3", nil, `{"v":"3"}`, "v: kept as string (no declared type)"},
		{"undeclared_text", "circle", nil, `{"v":"circle"}`, ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			args, convs, err := TypeArgs(map[string]string{"v": test.text}, func(p string) []string {
				if p == "v" {
					return test.declared
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if string(args) != test.want {
				t.Fatalf("arguments %s, want %s", args, test.want)
			}
			if test.note == "" {
				if len(convs) != 0 {
					t.Fatalf("conversions %v, want none", convs)
				}
				return
			}
			if len(convs) != 1 || !strings.Contains(convs[0].String(), test.note) {
				t.Fatalf("conversions %v, want one saying %q", convs, test.note)
			}
		})
	}
}

func TestTypeArgs_without_a_schema_keeps_the_guess(t *testing.T) {
	calls, _ := Recover("<function=f><parameter=zip>94107</parameter><parameter=c>Paris</parameter></function>")
	if len(calls) != 1 || calls[0].Params == nil {
		t.Fatalf("calls %+v", calls)
	}
	args, convs, err := TypeArgs(calls[0].Params, nil)
	if err != nil || string(args) != string(calls[0].Arguments) || string(args) != `{"c":"Paris","zip":94107}` {
		t.Fatalf("arguments %s (%v), want the guess %s", args, err, calls[0].Arguments)
	}
	if len(convs) != 1 || convs[0].Param != "zip" || !strings.Contains(convs[0].String(), "guessed") {
		t.Fatalf("conversions %v, want the guess for zip recorded", convs)
	}
}

// FuzzTypeArgs: any text under any declared type encodes, and a declared
// string is the text unchanged.
func FuzzTypeArgs(f *testing.F) {
	for _, s := range []string{"94107", "true", "null", `{"a": [1]}`, "1.5e3", "-0", "abc", "[1,", "\xff"} {
		f.Add(s, "string")
		f.Add(s, "integer")
		f.Add(s, "object")
	}
	f.Fuzz(func(t *testing.T, text, typ string) {
		args, _, err := TypeArgs(map[string]string{"v": text}, func(string) []string { return []string{typ} })
		if err != nil {
			return // text canon refuses (invalid UTF-8): the gate discards the call
		}
		if !json.Valid(args) {
			t.Fatalf("arguments %q are not JSON", args)
		}
		if typ == "string" {
			var v map[string]any
			if json.Unmarshal(args, &v) != nil || v["v"] != text {
				t.Fatalf("declared string %q became %s", text, args)
			}
		}
	})
}

// A parameter the schema gives no type keeps its text, as the engines do
// (issue 32: GLM 4.7's <arg_value>1</arg_value> and Qwen3-Coder's
// <parameter=a>1</parameter> became the number 1); Gemma's grammar types
// its own values, and those stay as it wrote them.
func TestTypedArgs_undeclared_keeps_the_text_or_the_grammar(t *testing.T) {
	none := func(string) []string { return nil }
	for _, text := range []string{
		"<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
		"<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
	} {
		calls, _ := Recover(text)
		if len(calls) != 1 {
			t.Fatalf("%q: calls %v", text, summary(calls))
		}
		args, convs, err := calls[0].TypedArgs(none)
		if err != nil || string(args) != `{"a":"1"}` {
			t.Fatalf("%s: arguments %s (%v), want the text \"1\"", calls[0].Format, args, err)
		}
		if len(convs) != 1 || convs[0].String() != "a: kept as string (no declared type)" {
			t.Fatalf("%s: conversions %v", calls[0].Format, convs)
		}
	}
	calls, _ := Recover(`<|tool_call>call:f{n:3,s:<|"|>3<|"|>,l:[1,2]}<tool_call|>`)
	if len(calls) != 1 {
		t.Fatalf("gemma: calls %v", summary(calls))
	}
	args, _, err := calls[0].TypedArgs(none)
	if err != nil || string(args) != `{"l":[1,2],"n":3,"s":"3"}` {
		t.Fatalf("gemma: arguments %s (%v), want the grammar's values", args, err)
	}
	args, _, err = calls[0].TypedArgs(func(p string) []string { return map[string][]string{"n": {"string"}}[p] })
	if err != nil || string(args) != `{"l":[1,2],"n":"3","s":"3"}` {
		t.Fatalf("gemma with n a string: arguments %s (%v)", args, err)
	}
}
