package canon

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"testing"
)

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
		{name: "escapes_as_encoding_json", in: `{"s":"\u0001\b\f\n\r\t\u2028\u2029\"\\\/\u00e9"}`, want: `{"s":"\u0001\b\f\n\r\t\u2028\u2029\"\\/é"}`},
		{name: "surrogate_pair_joined", in: `{"s":"\ud83d\ude00"}`, want: "{\"s\":\"\U0001F600\"}"},
		{name: "real_replacement_char_kept", in: `{"s":"\ufffd"}`, want: "{\"s\":\"\uFFFD\"}"},
		{name: "invalid_utf8_refused", in: "{\"s\":\"x\xffy\"}", fail: true},
		{name: "lone_high_surrogate_refused", in: `{"s":"\ud800"}`, fail: true},
		{name: "lone_low_surrogate_refused", in: `{"s":"\udc00x"}`, fail: true},
		{name: "duplicate_key_refused", in: `{"a":1,"a":2}`, fail: true},
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

// Text that is not UTF-8 has no canonical form: JSON and Value refuse it
// (wrapping ErrInvalidUTF8) where encoding/json wrote U+FFFD, the bytes a
// model never wrote; Exact keeps the bytes for a strict parser to refuse.
func TestValue_invalid_utf8_is_refused_not_replaced(t *testing.T) {
	for _, in := range []string{"{\"s\":\"x\xffy\"}", `{"s":"\ud800"}`, `{"k\udfff":1}`} {
		if got, err := JSON([]byte(in)); !errors.Is(err, ErrInvalidUTF8) {
			t.Errorf("JSON(%q) = %q, %v; want ErrInvalidUTF8", in, got, err)
		}
	}
	v := map[string]any{"0\xd4": "x\xff"}
	if got, err := Value(v); !errors.Is(err, ErrInvalidUTF8) {
		t.Fatalf("Value = %q, %v; want ErrInvalidUTF8", got, err)
	}
	got, err := Exact(v)
	if err != nil || string(got) != "{\"0\xd4\":\"x\xff\"}" {
		t.Fatalf("Exact = %q, %v; want the bytes as they are", got, err)
	}
}

// For every valid value the encoder writes what encoding/json writes with
// SetEscapeHTML(false), so canonical forms (idempotency keys, argument
// hashes) stored before this encoder stay the same.
func FuzzValue_matches_encoding_json(f *testing.F) {
	for _, s := range []string{`{"a":"<&>\u2028\u0000","b":[1,2.50,null,true]}`, `{"\u007f":"\t"}`, `[{}]`, `"\ud83d\ude00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !jsontext.Value(raw).IsValid() {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		got, err := Value(v)
		if err != nil {
			t.Fatalf("Value(%q): %v", raw, err)
		}
		if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got, w) {
			t.Fatalf("Value(%q) = %q, encoding/json writes %q", raw, got, w)
		}
	})
}
