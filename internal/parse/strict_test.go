package parse

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStrict_valid_arguments_are_canonical(t *testing.T) {
	for _, test := range []struct{ name, in, want string }{
		{"empty_object", `{}`, `{}`},
		{"sorted_keys_and_spacing", " {\"b\": 1,\n \"a\": [true, false, null]} \n", `{"a":[true,false,null],"b":1}`},
		{"numbers_keep_digits", `{"n": -0.50e+10, "i": 12345678901234567890}`, `{"i":12345678901234567890,"n":-0.50e+10}`},
		{"escapes", `{"s": "a\"b\\c\/d\n\u00e9\ud83d\ude00"}`, `{"s":"a\"b\\c/d\né😀"}`},
		{"real_replacement_char_kept", `{"s": "\ufffd�"}`, `{"s":"��"}`},
		{"utf8_raw", `{"ü": "°C"}`, `{"ü":"°C"}`},
		{"nested", `{"a": {"b": [{"c": {}}]}}`, `{"a":{"b":[{"c":{}}]}}`},
		{"html_not_escaped", `{"h": "<a&b>"}`, `{"h":"<a&b>"}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, v, err := Strict([]byte(test.in), DefaultLimits())
			if err != nil {
				t.Fatalf("Strict(%q): %v", test.in, err)
			}
			if string(got) != test.want {
				t.Fatalf("Strict(%q) = %s, want %s", test.in, got, test.want)
			}
			var viaStd map[string]any
			if err := json.Unmarshal([]byte(test.in), &viaStd); err != nil {
				t.Fatal(err)
			}
			if len(v) != len(viaStd) {
				t.Fatalf("value has %d keys, encoding/json sees %d", len(v), len(viaStd))
			}
		})
	}
}

func TestStrict_numbers_are_json_number(t *testing.T) {
	_, v, err := Strict([]byte(`{"n": 1.50}`), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := v["n"].(json.Number); !ok || n != "1.50" {
		t.Fatalf("v[n] = %#v, want json.Number(1.50)", v["n"])
	}
}

func TestStrict_malformed_is_invalid_json_with_position(t *testing.T) {
	for _, test := range []struct {
		name, in          string
		offset, line, col int
		msg               string
	}{
		{"missing_colon", `{"a" 1}`, 5, 1, 6, "expected ':'"},
		{"trailing_comma_object", `{"a": 1,}`, 8, 1, 9, "trailing comma"},
		{"trailing_comma_array", `{"a": [1,]}`, 9, 1, 10, "trailing comma"},
		{"single_quotes", `{'a': 1}`, 1, 1, 2, "double-quoted"},
		{"unquoted_key", "{\n  a: 1}", 4, 2, 3, "double-quoted"},
		{"python_true", `{"a": True}`, 6, 1, 7, "where a value should start"},
		{"bad_literal", `{"a": tru}`, 9, 1, 10, "invalid literal"},
		{"missing_comma", "{\"a\": 1\n \"b\": 2}", 9, 2, 2, "expected ',' or '}'"},
		{"leading_zero", `{"a": 01}`, 7, 1, 8, "expected ',' or '}'"},
		{"bad_fraction", `{"a": 1.}`, 8, 1, 9, "digit must follow '.'"},
		{"bad_escape", `{"a": "\x"}`, 8, 1, 9, "invalid escape"},
		{"control_char", "{\"a\": \"x\ny\"}", 8, 1, 9, "control character"},
		{"invalid_utf8", "{\"a\": \"\xff\"}", 7, 1, 8, "invalid UTF-8"},
		{"invalid_utf8_mid_string", "{\"city\": \"Par\xffis\"}", 13, 1, 14, "invalid UTF-8 (byte 0xff)"},
		{"invalid_utf8_in_key", "{\"k\xc0\xaf\": 1}", 3, 1, 4, "invalid UTF-8"},
		{"wtf8_lone_surrogate_bytes", "{\"a\": \"x\xed\xa0\x80\"}", 8, 1, 9, "invalid UTF-8"},
		{"lone_high_surrogate", `{"a": "x\ud800y"}`, 8, 1, 9, `lone surrogate escape \ud800`},
		{"lone_high_surrogate_at_end", `{"a": "\uD800"}`, 7, 1, 8, `lone surrogate escape \uD800`},
		{"lone_low_surrogate", `{"a": "\udc00"}`, 7, 1, 8, "lone surrogate"},
		{"high_then_non_low", `{"a": "\ud800\u0041"}`, 7, 1, 8, "lone surrogate"},
		{"high_then_high", `{"a": "\ud800\ud800"}`, 7, 1, 8, "lone surrogate"},
		{"lone_surrogate_in_key", `{"\udfff": 1}`, 2, 1, 3, "lone surrogate"},
		{"trailing_data", `{"a": 1} {"b": 2}`, 9, 1, 10, "unexpected data after"},
		{"top_level_array", `[1, 2]`, 0, 1, 1, "must be a JSON object, found an array"},
		{"top_level_string", ` "x"`, 1, 1, 2, "found a string"},
		{"top_level_number", `42`, 0, 1, 1, "found a number"},
		{"duplicate_key", `{"a": 1, "a": 2}`, 9, 1, 10, `duplicate key "a"`},
		{"duplicate_key_nested", `{"o": {"k": 1, "k": 1}}`, 15, 1, 16, `duplicate key "k"`},
		{"mismatched_close", `{"a": [1}`, 8, 1, 9, "expected ',' or ']'"},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, _, err := Strict([]byte(test.in), DefaultLimits())
			if err == nil {
				t.Fatalf("Strict(%q) accepted", test.in)
			}
			if err.Code != CodeInvalidJSON {
				t.Fatalf("code = %s, want invalid_json (%v)", err.Code, err)
			}
			if err.Offset != test.offset || err.Line != test.line || err.Column != test.col {
				t.Fatalf("at offset %d line %d col %d, want %d/%d/%d (%v)", err.Offset, err.Line, err.Column, test.offset, test.line, test.col, err)
			}
			if !strings.Contains(err.Message, test.msg) {
				t.Fatalf("message %q lacks %q", err.Message, test.msg)
			}
			if !strings.Contains(err.Excerpt, Marker) {
				t.Fatalf("excerpt %q has no marker", err.Excerpt)
			}
		})
	}
}

func TestStrict_truncated_is_truncated_not_invalid(t *testing.T) {
	for _, in := range []string{
		`{`, `{"`, `{"a`, `{"a"`, `{"a":`, `{"a": `, `{"a": "x`, `{"a": "x\`, `{"a": "\u00`, `{"a": "\ud83d`, `{"a": "\ud83d\`, `{"a": "\ud83d\ude`,
		`{"a": 1`, `{"a": 1,`, `{"a": 1, "b"`, `{"a": [`, `{"a": [1`, `{"a": [1,`,
		`{"a": {"b": {}`, `{"a": t`, `{"a": nul`, `{"a": -`, `{"a": 1.`, `{"a": 1e`, `{"a": 1e+`,
		"{\"a\": \"\xc3", // cut inside a two-byte character
		"{\"customer_id\":\"cus_9821\",\"line_items\":[{\"sku\":\"PRO-SEAT\",\"quantity\":3,\"price_cents\":49",
	} {
		t.Run(in, func(t *testing.T) {
			_, _, err := Strict([]byte(in), DefaultLimits())
			if err == nil || err.Code != CodeTruncated {
				t.Fatalf("Strict(%q) = %v, want truncated", in, err)
			}
			if err.Offset != len(in) {
				t.Fatalf("offset %d, want end of input %d", err.Offset, len(in))
			}
		})
	}
}

func TestStrict_error_line_and_column_on_later_line(t *testing.T) {
	in := "{\n  \"a\": 1,\n  \"b\": ?\n}"
	_, _, err := Strict([]byte(in), DefaultLimits())
	if err == nil || err.Line != 3 || err.Column != 8 || err.Offset != 19 {
		t.Fatalf("got %+v, want line 3 column 8 offset 19", err)
	}
	if want := `{\n  "a": 1,\n  "b": >>HERE<<?\n}`; err.Excerpt != want {
		t.Fatalf("excerpt %q, want %q", err.Excerpt, want)
	}
	if !strings.HasPrefix(err.Error(), "parse: invalid_json: ") {
		t.Fatalf("Error() = %q", err.Error())
	}
}

func TestStrict_empty_arguments(t *testing.T) {
	for _, in := range []string{"", "  \n"} {
		_, _, err := Strict([]byte(in), DefaultLimits())
		if err == nil || err.Code != CodeEmpty {
			t.Fatalf("Strict(%q) = %v, want empty_arguments", in, err)
		}
		lim := DefaultLimits()
		lim.EmptyIsObject = true
		c, v, err := Strict([]byte(in), lim)
		if err != nil || string(c) != "{}" || v == nil || len(v) != 0 {
			t.Fatalf("EmptyIsObject: Strict(%q) = %s %v %v, want {}", in, c, v, err)
		}
	}
}

func TestStrict_limits(t *testing.T) {
	lim := Limits{MaxBytes: 16, MaxDepth: 3}
	if _, _, err := Strict([]byte(`{"a": "0123456789"}`), lim); err == nil || err.Code != CodeTooLarge {
		t.Fatalf("17 bytes over a 16 byte limit: %v, want too_large", err)
	}
	if _, _, err := Strict([]byte(`{"a":[[1]]}`), lim); err != nil {
		t.Fatalf("depth 3 at limit 3: %v", err)
	}
	if _, _, err := Strict([]byte(`{"a":[[[]]]}`), lim); err == nil || err.Code != CodeTooDeep || err.Offset != 7 {
		t.Fatalf("depth 4 at limit 3: %+v, want too_deep at 7", err)
	}
}

func TestStrict_million_deep_nesting_is_too_deep_quickly(t *testing.T) {
	deep := []byte("{\"a\":" + strings.Repeat("[", 1_000_000))
	_, _, err := Strict(deep, DefaultLimits())
	if err == nil || err.Code != CodeTooDeep {
		t.Fatalf("got %v, want too_deep", err)
	}
	if err.Offset != 5+DefaultMaxDepth-1 {
		t.Fatalf("offset %d, want %d (the first bracket over the limit)", err.Offset, 5+DefaultMaxDepth-1)
	}
	allocs := testing.AllocsPerRun(3, func() { Strict(deep, DefaultLimits()) })
	if allocs > 200 {
		t.Fatalf("%v allocations for a refused deep document; depth must be refused before building", allocs)
	}
}

func TestLimits_zero_fields_mean_defaults_and_check_calls(t *testing.T) {
	if err := (Limits{}).CheckCalls(DefaultMaxCalls); err != nil {
		t.Fatalf("128 calls at default limit: %v", err)
	}
	err := (Limits{MaxCalls: 2}).CheckCalls(3)
	if err == nil || err.Code != CodeTooManyCalls || !strings.Contains(err.Error(), "limit of 2") {
		t.Fatalf("3 calls at limit 2: %v", err)
	}
}

func TestValue_reports_consumed_bytes_and_any_kind(t *testing.T) {
	for _, test := range []struct {
		in string
		n  int
	}{
		{`{"a": 1} trailing prose`, 8},
		{`  [1, {"b": 2}];`, 15},
		{`"s" x`, 3},
		{`12,`, 2},
	} {
		_, n, err := Value([]byte(test.in), DefaultLimits())
		if err != nil || n != test.n {
			t.Fatalf("Value(%q) n=%d err=%v, want n=%d", test.in, n, err, test.n)
		}
	}
	if _, _, err := Value([]byte(`{"a": [1, 2`), DefaultLimits()); err == nil || err.Code != CodeTruncated {
		t.Fatalf("truncated value: %v", err)
	}
	if _, _, err := Value([]byte(`{"a": "`+strings.Repeat("x", 100)+`"}`), Limits{MaxBytes: 50}); err == nil || err.Code != CodeTooLarge {
		t.Fatalf("oversize value: %v", err)
	}
}

func TestStrict_excerpt_of_invalid_utf8_stays_short(t *testing.T) {
	raw := []byte("{\"a\":\"x\"," + strings.Repeat("\xaf", 100000))
	_, _, err := Strict(raw, Limits{})
	if err == nil || len(err.Excerpt) > 200 {
		t.Fatalf("err %v: excerpt of %d bytes, want a short one", err, len(err.Excerpt))
	}
}
