package bench

import "strings"

// DocumentTool is the tool the large-argument scenarios call, applied
// beside --tools: create_invoice's schema and rules (examples/tools.yaml)
// plus a document string, where the bulk goes. (Bulk as line items is no
// good past a few thousand: the rules' CEL evaluation then stops at its
// memory limit and the call ends business_invalid.)
const DocumentTool = "bench_invoice_document"

// ToolsYAML is DocumentTool's definition.
func ToolsYAML() []byte {
	return []byte(strings.TrimSpace(`
tools:
  - name: `+DocumentTool+`
    description: Creates a draft invoice with an attached document (base64). Bench only.
`+InvoiceSchema("document")+`    rules:
      - expr: args.line_items.size() > 0
        message: At least one line item is required.
      - expr: args.line_items.map(i, i.quantity * i.price_cents).sum() > 0
        message: Invoice total must be greater than zero.
    policy:
      risk: write
  - name: `+LimitedTool+`
    description: Creates a draft invoice, under one count and one weight limit. Bench only.
`+InvoiceSchema()+`    policy:
      risk: write
limits:
  - name: bench_calls_per_tenant
    tools: [`+LimitedTool+`]
    window: 1h
    count: 1000000000
  - name: bench_cents_per_customer
    tools: [`+LimitedTool+`]
    key: 'tenant + ":" + args.customer_id'
    window: 24h
    weight: args.line_items.map(i, i.quantity * i.price_cents).sum()
    max: 1000000000000
`) + "\n")
}

// InvoiceSchema is create_invoice's input_schema (examples/tools.yaml), as
// the lines of a tool in a tools file, with each name in extra one more
// required non-empty string after line_items. The bench's tools and the
// chaos run's create_invoice share it, so they call one schema.
func InvoiceSchema(extra ...string) string {
	var props, required strings.Builder
	for _, name := range extra {
		props.WriteString("        " + name + ": {type: string, minLength: 1}\n")
		required.WriteString(", " + name)
	}
	return `    input_schema:
      type: object
      properties:
        customer_id: {type: string, minLength: 1}
        currency: {type: string, enum: [USD, EUR, GBP]}
        line_items:
          type: array
          minItems: 1
          items:
            type: object
            properties:
              sku: {type: string, minLength: 1}
              quantity: {type: integer, exclusiveMinimum: 0}
              price_cents: {type: integer, minimum: 0}
            required: [sku, quantity, price_cents]
            additionalProperties: false
` + props.String() + `      required: [customer_id, currency, line_items` + required.String() + `]
      additionalProperties: false
`
}

// LimitedTool is the tool of the limits scenario: create_invoice's schema
// under one count limit and one weight limit that never bite, so the
// scenario measures what metering costs.
const LimitedTool = "bench_invoice_limited"
