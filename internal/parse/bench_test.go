package parse

import (
	"encoding/json"
	"strings"
	"testing"
)

// args1KiB is a realistic 1 KiB argument object: nested objects, an array of
// objects, numbers, booleans, escapes and non-ASCII text.
var args1KiB = func() []byte {
	var b strings.Builder
	b.WriteString(`{"customer_id":"cus_9821","currency":"EUR","note":"Lieferung an \"Hof 2\" — bitte klingeln\n","priority":true,"line_items":[`)
	for i := 0; b.Len() < 960; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"sku":"PRO-SEAT-` + itoa(i) + `","quantity":3,"price_cents":4900,"discount":0.15}`)
	}
	b.WriteString(`],"meta":{"source":"agent"}}`)
	return []byte(b.String())
}()

func BenchmarkStrict_1KiB(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(args1KiB)))
	for b.Loop() {
		if _, _, err := Strict(args1KiB, DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodingJSON_1KiB is the baseline: decoding alone, without the
// duplicate check, truncation diagnosis or the canonical form Strict adds.
func BenchmarkEncodingJSON_1KiB(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(args1KiB)))
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(args1KiB, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStrictDecodeOnly_1KiB is Strict's decoding without canonical
// encoding, the like-for-like comparison with encoding/json.
func BenchmarkStrictDecodeOnly_1KiB(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(args1KiB)))
	for b.Loop() {
		if _, _, err := Value(args1KiB, DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}
