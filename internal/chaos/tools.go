package chaos

import "github.com/toolgate/toolgate/internal/bench"

// toolsYAML are the tools of internal/bench.Mix (create_invoice and get_weather as
// in examples/tools.yaml) with a short executor timeout: a claim's lease is
// the timeout plus the AckWait, so the claim of an execute process killed
// mid-call expires within seconds and is reconciled during the run.
func toolsYAML() string {
	return `
tools:
  - name: create_invoice
    description: Creates a draft invoice for an existing customer.
` + bench.InvoiceSchema() + `    rules:
      - expr: args.line_items.map(i, i.quantity * i.price_cents).sum() > 0
        message: Invoice total must be greater than zero.
    policy: {risk: write}
    executor: {timeout: 2s}
    repair: {max_attempts: 1}
  - name: get_weather
    description: Current weather for a city. Read-only.
    input_schema:
      type: object
      properties:
        city: {type: string, minLength: 1}
      required: [city]
      additionalProperties: false
    policy: {risk: read}
    executor: {timeout: 2s}
`
}
