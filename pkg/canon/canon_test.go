package canon

import "testing"

func TestJSON(t *testing.T) {
	for _, test := range []struct {
		name, in, want string
		fail           bool
	}{
		{name: "sorts_keys", in: `{"b":1, "a":{"d":2,"c":3}}`, want: `{"a":{"c":3,"d":2},"b":1}`},
		{name: "keeps_number_digits", in: `{"n": 1.50, "big": 12345678901234567890}`, want: `{"big":12345678901234567890,"n":1.50}`},
		{name: "no_html_escape", in: `{"s":"<a&b>"}`, want: `{"s":"<a&b>"}`},
		{name: "array_order_kept", in: `[3, 1, 2]`, want: `[3,1,2]`},
		{name: "two_values", in: `{} {}`, fail: true},
		{name: "truncated", in: `{"a":`, fail: true},
		{name: "empty", in: ``, fail: true},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, err := JSON([]byte(test.in))
			if test.fail {
				if err == nil {
					t.Fatalf("JSON(%q) = %s, want error", test.in, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != test.want {
				t.Fatalf("JSON(%q) = %s, want %s", test.in, got, test.want)
			}
		})
	}
}

// A string with invalid UTF-8 is written with U+FFFD, the same bytes a
// second pass writes, so canonical JSON is a fixed point (textcall's
// FuzzRecover found "\ufffd" from the first pass and "�" from the
// second).
func TestValue_invalid_utf8_is_a_fixed_point(t *testing.T) {
	first, err := Value(map[string]any{"0\xd4": "x\xff"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := JSON(first)
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(again) || string(first) != "{\"0\uFFFD\":\"x\uFFFD\"}" {
		t.Fatalf("first %q, again %q, want both {\"0\uFFFD\":\"x\uFFFD\"}", first, again)
	}
}
