package parse

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

var allCosmetic = Cosmetic{TrailingCommas: true, Comments: true, SingleQuotes: true, PythonLiterals: true, UnquotedKeys: true}

func TestRepair_each_kind_alone(t *testing.T) {
	for _, test := range []struct {
		name    string
		opts    Cosmetic
		in, out string
		changes []Change
	}{
		{"trailing_comma_object", Cosmetic{TrailingCommas: true}, `{"a": 1, }`, `{"a": 1 }`,
			[]Change{{ChangeTrailingComma, 7, ",", ""}}},
		{"trailing_comma_array", Cosmetic{TrailingCommas: true}, `{"a": [1,2,]}`, `{"a": [1,2]}`,
			[]Change{{ChangeTrailingComma, 10, ",", ""}}},
		{"comma_in_string_kept", Cosmetic{TrailingCommas: true}, `{"a": ",}"}`, `{"a": ",}"}`, nil},
		{"line_comment", Cosmetic{Comments: true}, "{\"a\": 1 // one\n}", "{\"a\": 1 \n}",
			[]Change{{ChangeComment, 8, "// one", ""}}},
		{"block_comment", Cosmetic{Comments: true}, `{/* c */"a": 1}`, `{"a": 1}`,
			[]Change{{ChangeComment, 1, "/* c */", ""}}},
		{"comment_in_string_kept", Cosmetic{Comments: true}, `{"u": "http://x/*y*/"}`, `{"u": "http://x/*y*/"}`, nil},
		{"single_quotes", Cosmetic{SingleQuotes: true}, `{'a': 'it\'s "x"'}`, `{"a": "it's \"x\""}`,
			[]Change{{ChangeSingleQuotes, 1, `'a'`, `"a"`}, {ChangeSingleQuotes, 6, `'it\'s "x"'`, `"it's \"x\""`}}},
		{"apostrophe_in_double_quotes_kept", Cosmetic{SingleQuotes: true}, `{"a": "it's"}`, `{"a": "it's"}`, nil},
		{"python_literals", Cosmetic{PythonLiterals: true}, `{"a": True, "b": [False, None]}`, `{"a": true, "b": [false, null]}`,
			[]Change{{ChangePythonLiteral, 6, "True", "true"}, {ChangePythonLiteral, 18, "False", "false"}, {ChangePythonLiteral, 25, "None", "null"}}},
		{"python_literal_in_string_kept", Cosmetic{PythonLiterals: true}, `{"a": "True"}`, `{"a": "True"}`, nil},
		{"python_literal_part_of_word_kept", Cosmetic{PythonLiterals: true}, `{"a": Truely}`, `{"a": Truely}`, nil},
		{"unquoted_keys", Cosmetic{UnquotedKeys: true}, `{a: 1, b_2 : {c: 3}}`, `{"a": 1, "b_2" : {"c": 3}}`,
			[]Change{{ChangeUnquotedKey, 1, "a", `"a"`}, {ChangeUnquotedKey, 7, "b_2", `"b_2"`}, {ChangeUnquotedKey, 14, "c", `"c"`}}},
		{"unquoted_value_not_key", Cosmetic{UnquotedKeys: true}, `{"a": b}`, `{"a": b}`, nil},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, changes := Repair([]byte(test.in), test.opts)
			if string(got) != test.out {
				t.Fatalf("Repair(%q) = %q, want %q", test.in, got, test.out)
			}
			if !reflect.DeepEqual(changes, test.changes) {
				t.Fatalf("changes = %+v, want %+v", changes, test.changes)
			}
			if test.changes != nil {
				if _, _, err := Strict(got, DefaultLimits()); err != nil && !strings.Contains(test.name, "value_not_key") {
					t.Fatalf("repaired %q does not pass Strict: %v", got, err)
				}
			}
		})
	}
}

func TestRepair_disabled_kinds_change_nothing(t *testing.T) {
	in := "{a: 'x', \"b\": True, /* c */ \"d\": [1,],}"
	got, changes := Repair([]byte(in), Cosmetic{})
	if string(got) != in || changes != nil {
		t.Fatalf("Repair with no fixes enabled changed %q into %q (%v)", in, got, changes)
	}
}

func TestRepair_combined_passes_strict(t *testing.T) {
	in := "{\n  // the city\n  city: 'Paris',\n  units: None, /* metric */\n  days: [1, 2, 3,],\n  ok: True,\n}"
	got, changes := Repair([]byte(in), allCosmetic)
	c, _, err := Strict(got, DefaultLimits())
	if err != nil {
		t.Fatalf("repaired %q: %v", got, err)
	}
	if want := `{"city":"Paris","days":[1,2,3],"ok":true,"units":null}`; string(c) != want {
		t.Fatalf("canonical %s, want %s", c, want)
	}
	kinds := map[string]int{}
	for _, ch := range changes {
		kinds[ch.Kind]++
		if !strings.HasPrefix(in[ch.Offset:], ch.Before) {
			t.Fatalf("change %+v: input at offset %d does not start with Before", ch, ch.Offset)
		}
	}
	want := map[string]int{ChangeComment: 2, ChangeUnquotedKey: 4, ChangeSingleQuotes: 1, ChangePythonLiteral: 2, ChangeTrailingComma: 2}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("change kinds %v, want %v", kinds, want)
	}
}

func TestRepair_never_adds_closers_to_truncated_input(t *testing.T) {
	for _, test := range []struct {
		in   string
		code string
	}{
		{`{"a": [1, 2,`, CodeTruncated},
		{`{'a': 'unterminated`, CodeTruncated},
		{`{"a": True`, CodeTruncated},
		{`{"a": {"b": 1,}`, CodeTruncated},
		// An unterminated block comment is left alone, not removed.
		{`{a: 1, /* open comment`, CodeInvalidJSON},
		{`{"a": 1} /* open comment`, CodeInvalidJSON},
	} {
		got, _ := Repair([]byte(test.in), allCosmetic)
		if bytes.Count(got, []byte("}"))+bytes.Count(got, []byte("]")) > strings.Count(test.in, "}")+strings.Count(test.in, "]") {
			t.Fatalf("Repair(%q) = %q added a bracket", test.in, got)
		}
		if _, _, err := Strict(got, DefaultLimits()); err == nil || err.Code != test.code {
			t.Fatalf("Repair(%q) = %q, Strict says %v, want %s", test.in, got, err, test.code)
		}
	}
}

func TestRepair_valid_json_is_unchanged(t *testing.T) {
	in := `{"a": [true, false, null, "x, }", "// not a comment", 1e-5], "b": {"True": "None"}}`
	got, changes := Repair([]byte(in), allCosmetic)
	if string(got) != in || len(changes) != 0 {
		t.Fatalf("valid JSON changed: %q %v", got, changes)
	}
}
