package rules

import "testing"

func BenchmarkRules_create_invoice(b *testing.B) {
	set := mustCompile(b, invoiceRules)
	for _, bc := range []struct{ name, args string }{
		{"valid", `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"A-1","quantity":2,"price_cents":1500},{"sku":"B-2","quantity":1,"price_cents":99}],"idempotency_key":"k1"}`},
		{"invalid", `{"customer_id":"cus_9821","currency":"USD","line_items":[]}`},
		{"review", `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"A-1","quantity":2,"price_cents":60000000}]}`},
	} {
		args := decodeArgs(b, bc.args)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				set.Eval(args, Context{Tenant: "acme", Principal: "ann"})
			}
		})
	}
}

func BenchmarkDetectPlaceholders_create_invoice(b *testing.B) {
	args := decodeArgs(b, `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"A-1","quantity":2,"price_cents":1500},{"sku":"TODO","quantity":1,"price_cents":99}],"idempotency_key":"k1"}`)
	b.ReportAllocs()
	for b.Loop() {
		DetectPlaceholders(args, PlaceholderConfig{})
	}
}
