package canon

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decodedForm is how JSON made the canonical form before it read tokens in
// one pass: check the document with exact, decode it into Go values with
// encoding/json (numbers as json.Number), encode those with Value. JSON must
// give the same bytes, or every stored idempotency key and seal would change
// meaning with an upgrade.
func decodedForm(raw []byte) ([]byte, error) {
	if err := exact(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return Value(v)
}

func sameAsDecodedForm(t *testing.T, raw []byte) {
	t.Helper()
	got, err := JSON(raw)
	want, werr := decodedForm(raw)
	if (err == nil) != (werr == nil) {
		t.Fatalf("JSON(%q) = %q, %v; the decoded form: %q, %v", raw, got, err, want, werr)
	}
	if err != nil {
		if errors.Is(err, ErrInvalidUTF8) != errors.Is(werr, ErrInvalidUTF8) {
			t.Fatalf("JSON(%q): %v; the decoded form: %v (not the same class)", raw, err, werr)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("JSON(%q) = %s, the decoded form %s", raw, got, want)
	}
}

// everyValue calls f with v and each value nested in it.
func everyValue(t *testing.T, v jsontext.Value, f func(jsontext.Value)) {
	f(v)
	k := v.Kind()
	if k != '{' && k != '[' {
		return
	}
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	if _, err := dec.ReadToken(); err != nil {
		t.Fatal(err)
	}
	for dec.PeekKind() != '}' && dec.PeekKind() != ']' {
		if k == '{' {
			if _, err := dec.ReadToken(); err != nil {
				t.Fatal(err)
			}
		}
		sub, err := dec.ReadValue()
		if err != nil {
			t.Fatal(err)
		}
		everyValue(t, sub.Clone(), f)
	}
}

// Every document and every value inside the JSON-Schema-Test-Suite and the
// recorded provider responses (escapes, unicode, numbers of every shape,
// deep nesting, out-of-order keys) has the canonical form it had before.
func TestJSON_is_the_decoded_form_on_the_recorded_corpus(t *testing.T) {
	var files, values int
	for _, dir := range []string{"../../testdata/json-schema-test-suite/tests", "../../testdata/provider-fixtures"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
				return err
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			sameAsDecodedForm(t, raw)
			if v := jsontext.Value(raw); v.IsValid() {
				everyValue(t, v, func(sub jsontext.Value) { values++; sameAsDecodedForm(t, sub) })
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 100 || values < 10000 {
		t.Fatalf("only %d files and %d values compared: is testdata/ at the repository root there?", files, values)
	}
}

func TestJSON_is_the_decoded_form_on_hostile_documents(t *testing.T) {
	for _, in := range []string{
		`{"b":1,"a":2,"c":{"z":[{"y":1,"x":2}],"a":null}}`, `{"é":1,"e":2,"E":3,"\u0000":4}`, `{"a":1,"a":2}`,
		`{"a":{"b":1,"b":2}}`, `[1,2,]`, `{"a" 1}`, `{"a":1}x`, `{"a":1} {"b":2}`, `   {"a":1}   `,
		`-0`, `1e400`, `0.000000000000000000001`, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", `{"\ud800":1}`,
		`{"a":"\u2028\u2029<>&"}`, `[]`, `{}`, `[[[[[]]]]]`, `{"":{"":{"":1}}}`, `null`, `true`, ` `, ``,
		`{"b":1,"a":2,"b":3}`, `["x","x"]`, `{"k":[{"b":2,"a":1},{"d":4,"c":3}]}`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	} {
		sameAsDecodedForm(t, []byte(in))
	}
}

func FuzzJSON_is_the_decoded_form(f *testing.F) {
	for _, in := range []string{`{"b":1,"a":[2,{"d":"x","c":null}]}`, `{"a":1,"a":2}`, "\"\xff\"", `"\ud800"`, `1.50e+3`, `[1,2]x`} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameAsDecodedForm(t, raw) })
}

func BenchmarkJSON(b *testing.B) {
	raw := []byte(`{"line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900},{"sku":"SUPPORT","quantity":1,"price_cents":19900}],"customer_id":"cus_1234","currency":"USD","memo":"Q4 \u00e9 seats","due_days":30}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := JSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSON_decoded_form(b *testing.B) {
	raw := []byte(`{"line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900},{"sku":"SUPPORT","quantity":1,"price_cents":19900}],"customer_id":"cus_1234","currency":"USD","memo":"Q4 \u00e9 seats","due_days":30}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodedForm(raw); err != nil {
			b.Fatal(err)
		}
	}
}
