package chaos

// toolsYAML are the tools of internal/bench.Mix (create_invoice and get_weather as
// in examples/tools.yaml) with a short executor timeout: a claim's lease is
// the timeout plus the AckWait, so the claim of an execute process killed
// mid-call expires within seconds and is reconciled during the run.
const toolsYAML = `
tools:
  - name: create_invoice
    description: Creates a draft invoice for an existing customer.
    input_schema:
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
      required: [customer_id, currency, line_items]
      additionalProperties: false
    rules:
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
