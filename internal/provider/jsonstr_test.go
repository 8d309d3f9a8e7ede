package provider

import (
	"encoding/json"
	"testing"
)

func TestAppendJSONString_joins_fragments(t *testing.T) {
	for _, test := range []struct {
		name  string
		frags []string
		want  string
	}{
		{"plain and escapes", []string{`"{\"a\": \"x\\ny\"}"`}, "{\"a\": \"x\\ny\"}"},
		{"utf8 split mid-sequence", []string{"\"caf\xc3\"", "\"\xa9\""}, "café"},
		{"surrogate pair split across fragments", []string{`"\ud83c"`, `"\udfc6 win"`}, "🏆 win"},
		{"surrogate pair in one fragment", []string{`"\ud83c\udfb2"`}, "🎲"},
		{"escaped backslash-u in argument text split", []string{`"\\u00"`, `"e9"`}, `\u00e9`},
		{"all short escapes", []string{`"\"\\\/\b\f\n\r\t"`}, "\"\\/\b\f\n\r\t"},
	} {
		t.Run(test.name, func(t *testing.T) {
			var got []byte
			for _, f := range test.frags {
				var err error
				if got, err = appendJSONString(got, []byte(f)); err != nil {
					t.Fatalf("fragment %s: %v", f, err)
				}
			}
			if string(got) != test.want {
				t.Errorf("got %q, want %q", got, test.want)
			}
		})
	}
}

func TestAppendJSONString_matches_encoding_json_on_valid_text(t *testing.T) {
	for _, s := range []string{"", "abc", "ünï", "{\"k\":[1,2]}", "tab\there", "\u2028", "😀"} {
		raw, _ := json.Marshal(s)
		got, err := appendJSONString(nil, raw)
		if err != nil || string(got) != s {
			t.Errorf("%q: got %q, %v", s, got, err)
		}
	}
}

func TestAppendJSONString_rejects_non_strings(t *testing.T) {
	for _, raw := range []string{``, `"`, `1`, `{}`, `"\x"`, `"\u12"`, `"\u12zz"`, `"a\"`, "\"\x01\"", `"a"b"`} {
		if _, err := appendJSONString(nil, []byte(raw)); err == nil {
			t.Errorf("%q: no error", raw)
		}
	}
}
