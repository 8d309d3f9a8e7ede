package schema

import "testing"

func BenchmarkValidate_create_invoice(b *testing.B) {
	sch := mustCompile(b, "create_invoice", createInvoiceSchema)
	for _, bc := range []struct{ name, doc string }{
		{"valid", `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"A-1","quantity":2,"price_cents":1500},{"sku":"B-2","quantity":1,"price_cents":99}],"idempotency_key":"k1"}`},
		{"invalid", `{"customer_id":"","currency":"JPY","discount":5,"line_items":[{"sku":"A-1","quantity":0,"price_cents":100},{"quantity":1,"price_cents":-5}]}`},
	} {
		doc := decode(b, bc.doc)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sch.Validate(doc)
			}
		})
	}
}
