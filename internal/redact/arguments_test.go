package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const secretsArgs = `{
  "customer": {"name": "Jane Doe", "email": "jane.doe@example.com"},
  "payment": {"card": "4111 1111 1111 1111", "card_raw": 5555555555554444, "cvc_hint": "see vault"},
  "order_number": "1234567812345678",
  "order_id": 1234567812345678,
  "api_key": "sk-ant-api03-Qw3rTy7uIoP9aSdF",
  "headers": {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"},
  "login": {"user": "jane", "password": "hunter2-correct-horse"},
  "note": "forward to bob@example.org with key sk-proj-AbCdEfGhIjKlMnOpQrSt123",
  "max_tokens": 300,
  "empty_token": "",
  "nothing": null
}`

func TestArguments_masks_every_kind_of_secret(t *testing.T) {
	got := Arguments([]byte(secretsArgs), Options{})
	for _, secret := range []string{
		"jane.doe@example.com", "bob@example.org",
		"4111 1111 1111 1111", "4111111111111111", "1111 1111", "5555555555554444",
		"sk-ant-api03-Qw3rTy7uIoP9aSdF", "Qw3rTy7uIoP9aSdF", "AbCdEfGhIjKlMnOpQrSt123",
		"eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxIn0",
		"hunter2",
	} {
		if strings.Contains(got, secret) {
			t.Errorf("%q survived:\n%s", secret, got)
		}
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatalf("redacted valid JSON is not valid JSON: %v\n%s", err, got)
	}
	if v["order_number"] != "1234567812345678" {
		t.Errorf("non-Luhn order number lost: %v", v["order_number"])
	}
	if !strings.Contains(got, `"order_id":1234567812345678`) {
		t.Errorf("non-Luhn numeric order id lost:\n%s", got)
	}
	if v["max_tokens"] != 300.0 || v["empty_token"] != "" || v["nothing"] != nil {
		t.Errorf("harmless values changed:\n%s", got)
	}
	if v["customer"].(map[string]any)["name"] != "Jane Doe" {
		t.Errorf("name lost:\n%s", got)
	}
	if v["customer"].(map[string]any)["email"] != "j***@example.com" {
		t.Errorf("email not masked as documented:\n%s", got)
	}
	if v["login"].(map[string]any)["password"] != Placeholder {
		t.Errorf("password not replaced by the placeholder:\n%s", got)
	}
}

func TestArguments_keeps_member_order_and_compacts(t *testing.T) {
	got := Arguments([]byte(`{ "z": 1, "a": [true, false, null], "m": {"x": "<&>"} }`), Options{})
	if want := `{"z":1,"a":[true,false,null],"m":{"x":"<&>"}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestArguments_truncated_json_is_redacted_as_text(t *testing.T) {
	for _, test := range []struct {
		name, raw string
		secrets   []string
	}{
		{"cut inside a key value", `{"to": "a@b.co", "api_key": "sk-ant-api03-Zz9Yy8Xx7Ww6Vv5`, []string{"Zz9Yy8Xx7Ww6", "a@b.co"}},
		{"cut inside a password", `{"user":"x","password":"hunt`, []string{"hunt"}},
		{"cut inside a card", `{"items":[{"sku":"A1"}],"card":"4111 1111 1111 1111`, []string{"4111 1111 1111 1111"}},
		{"cut inside a sensitive object", `{"credentials": {"user": "x", "pin": "9`, []string{`"user": "x"`}},
		{"malformed", `{password: 'hunter2', note: bearer abcdef}`, []string{"hunter2", "abcdef"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := Arguments([]byte(test.raw), Options{})
			for _, s := range test.secrets {
				if strings.Contains(got, s) {
					t.Errorf("%q survived: %s", s, got)
				}
			}
			if !strings.Contains(got, Placeholder) && !strings.Contains(got, "***@") {
				t.Errorf("nothing redacted: %s", got)
			}
		})
	}
}

func TestArguments_sensitive_fields_by_name_and_pointer(t *testing.T) {
	raw := []byte(`{"payer":{"iban":"DE89370400440532013000","tax_id":"X1"},"payee":{"tax_id":"Y2"},"cards":[{"holder":"A"},{"holder":"B"}],"ssn_like":{"nested":[1,2]}}`)
	got := Arguments(raw, Options{SensitiveFields: []string{"IBAN", "/payer/tax_id", "/cards/*/holder", "/ssn_like"}})
	want := `{"payer":{"iban":"[REDACTED]","tax_id":"[REDACTED]"},"payee":{"tax_id":"Y2"},"cards":[{"holder":"[REDACTED]"},{"holder":"[REDACTED]"}],"ssn_like":"[REDACTED]"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestArguments_sensitive_name_inside_embedded_json_string(t *testing.T) {
	got := Arguments([]byte(`{"payload":"{\"iban\":\"DE89370400440532013000\"}"}`), Options{SensitiveFields: []string{"iban"}})
	if strings.Contains(got, "DE8937") {
		t.Fatalf("embedded sensitive field survived: %s", got)
	}
}

func TestArguments_pointer_to_array_element(t *testing.T) {
	got := Arguments([]byte(`{"codes":["a","b","c"]}`), Options{SensitiveFields: []string{"/codes/1"}})
	if want := `{"codes":["a","[REDACTED]","c"]}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestArguments_sensitive_names_apply_to_truncated_text(t *testing.T) {
	got := Arguments([]byte(`{"payer":{"iban":"DE8937040044`), Options{SensitiveFields: []string{"/payer/iban"}})
	if strings.Contains(got, "DE8937040044") {
		t.Fatalf("pointer's last segment not used on text: %s", got)
	}
}

func TestArguments_key_names_and_top_level_scalars(t *testing.T) {
	for _, test := range []struct{ raw, want string }{
		{`{"jane@example.com": 1}`, `{"j***@example.com":1}`},
		{`"4111111111111111"`, `"[REDACTED]"`},
		{`4111111111111111`, `"[REDACTED]"`},
		{`  42 `, `42`},
		{`"tab\there \u0001"`, `"tab\there \u0001"`},
		{``, ``},
		{`{"secret": {"a": "}]\"", "b": [1, {"c": "x"}]}, "after": "ok"}`, `{"secret":"[REDACTED]","after":"ok"}`},
		{`{"pass\u0077ord": "x", "caf\u00e9": "cr\u00e8me"}`, `{"password":"[REDACTED]","café":"crème"}`},
		{"\n[ 1 ,\t{ } , [ ] , \"\" ]\n", `[1,{},[],""]`},
	} {
		if got := Arguments([]byte(test.raw), Options{}); got != test.want {
			t.Errorf("Arguments(%s) = %s, want %s", test.raw, got, test.want)
		}
	}
}

// oneKiBArgs builds a realistic argument object of about 1 KiB.
func oneKiBArgs() []byte {
	var b strings.Builder
	b.WriteString(`{"customer":{"name":"Jane Doe","email":"jane.doe@example.com","phone":"+49 30 1234567"},"line_items":[`)
	for i := range 9 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%04d","description":"Widget model %d, blue","quantity":%d,"unit_price":"19.99"}`, i, i, i+1)
	}
	b.WriteString(`],"payment":{"card":"4111 1111 1111 1111","expiry":"12/27"},"api_key":"sk-ant-api03-Qw3rTy7uIoP9aSdF","note":"deliver before noon, call ahead","max_tokens":300}`)
	return []byte(b.String())
}

func BenchmarkArguments_1KiB_object(b *testing.B) {
	raw := oneKiBArgs()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Arguments(raw, Options{SensitiveFields: []string{"/customer/phone"}})
	}
}

func BenchmarkArguments_1KiB_truncated(b *testing.B) {
	raw := oneKiBArgs()
	raw = raw[:len(raw)-40]
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Arguments(raw, Options{})
	}
}

func TestOneKiBArgs_is_about_1KiB_and_redacted(t *testing.T) {
	raw := oneKiBArgs()
	if len(raw) < 900 || len(raw) > 1200 {
		t.Fatalf("benchmark input is %d bytes", len(raw))
	}
	got := Arguments(raw, Options{})
	if strings.Contains(got, "4111") || strings.Contains(got, "Qw3rTy") || strings.Contains(got, "jane.doe") {
		t.Fatalf("benchmark input not redacted: %s", got)
	}
}
