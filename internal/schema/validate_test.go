package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// createInvoiceSchema is what zod-to-json-schema emits (target jsonSchema7, defaults) for
// the seed's CreateInvoiceSchema.
const createInvoiceSchema = `{
  "type": "object",
  "properties": {
    "customer_id": {"type": "string", "minLength": 1},
    "currency": {"type": "string", "enum": ["USD", "EUR", "GBP"]},
    "line_items": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "sku": {"type": "string", "minLength": 1},
          "quantity": {"type": "integer", "exclusiveMinimum": 0},
          "price_cents": {"type": "integer", "minimum": 0}
        },
        "required": ["sku", "quantity", "price_cents"],
        "additionalProperties": false
      },
      "minItems": 1
    },
    "idempotency_key": {"type": "string"}
  },
  "required": ["customer_id", "currency", "line_items"],
  "additionalProperties": false,
  "$schema": "http://json-schema.org/draft-07/schema#"
}`

func decode(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func mustCompile(t testing.TB, name, raw string, opts ...Option) *Schema {
	t.Helper()
	s, err := Compile(name, json.RawMessage(raw), opts...)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

func strs(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

func TestValidate_create_invoice(t *testing.T) {
	noSchemaKeyword := strings.Replace(createInvoiceSchema, `"$schema": "http://json-schema.org/draft-07/schema#"`, `"title": "create_invoice"`, 1)
	for _, raw := range []string{createInvoiceSchema, noSchemaKeyword} {
		sch := mustCompile(t, "create_invoice", raw)
		for _, test := range []struct {
			name string
			doc  string
			want []string
		}{
			{"valid_invoice_has_no_problems",
				`{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"A-1","quantity":2,"price_cents":1500}],"idempotency_key":"k1"}`,
				nil},
			{"integer_written_with_fraction_zero_is_an_integer",
				`{"customer_id":"cus_9821","currency":"EUR","line_items":[{"sku":"A-1","quantity":2.0,"price_cents":0}]}`,
				nil},
			{"empty_line_items_fails_minItems",
				`{"customer_id":"cus_9821","currency":"USD","line_items":[]}`,
				[]string{"line_items: must have at least 1 items, got 0 (minItems)"}},
			{"missing_required_properties_are_each_named",
				`{"line_items":[{"sku":"A-1","quantity":1,"price_cents":1}]}`,
				[]string{"currency: is required but missing (required)", "customer_id: is required but missing (required)"}},
			{"root_that_is_not_an_object",
				`[1,2]`,
				[]string{"(root): must be object, got array (type)"}},
			{"every_problem_is_reported_with_its_path",
				`{"customer_id":"","currency":"JPY","discount":5,"line_items":[
				   {"sku":"A-1","quantity":0,"price_cents":100,"color":"red"},
				   {"quantity":1,"price_cents":-5},
				   {"sku":"C","quantity":1.5,"price_cents":"12"}]}`,
				[]string{
					`currency: must be one of "USD", "EUR", "GBP", got "JPY" (enum)`,
					`customer_id: must be at least 1 characters long, got 0 (minLength)`,
					`discount: is not an allowed property: remove it (additionalProperties)`,
					`line_items/0/color: is not an allowed property: remove it (additionalProperties)`,
					`line_items/0/quantity: must be > 0, got 0 (exclusiveMinimum)`,
					`line_items/1/price_cents: must be >= 0, got -5 (minimum)`,
					`line_items/1/sku: is required but missing (required)`,
					`line_items/2/price_cents: must be integer, got string (type)`,
					`line_items/2/quantity: must be integer, got number (type)`,
				}},
		} {
			t.Run(test.name, func(t *testing.T) {
				got := strs(sch.Validate(decode(t, test.doc)))
				if !slices.Equal(got, test.want) {
					t.Errorf("problems:\n got %q\nwant %q", got, test.want)
				}
			})
		}
	}
}

func TestValidate_problems_carry_pointer_and_keyword(t *testing.T) {
	sch := mustCompile(t, "create_invoice", createInvoiceSchema)
	got := sch.Validate(decode(t, `{"customer_id":"c","currency":"USD","line_items":[{"sku":"a","quantity":-1,"price_cents":1}]}`))
	want := []Problem{{Path: "/line_items/0/quantity", Keyword: "exclusiveMinimum", Message: "must be > 0, got -1"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestValidate_float64_numbers_work_as_json_numbers(t *testing.T) {
	sch := mustCompile(t, "create_invoice", createInvoiceSchema)
	var doc any
	if err := json.Unmarshal([]byte(`{"customer_id":"c","currency":"USD","line_items":[{"sku":"a","quantity":0.5,"price_cents":1}]}`), &doc); err != nil {
		t.Fatal(err)
	}
	got := strs(sch.Validate(doc))
	want := []string{"line_items/0/quantity: must be integer, got number (type)"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestValidate_order_is_numeric_by_index(t *testing.T) {
	sch := mustCompile(t, "list", `{"type":"array","items":{"type":"integer"}}`)
	items := make([]string, 12)
	for i := range items {
		items[i] = `"x"`
	}
	got := sch.Validate(decode(t, "["+strings.Join(items, ",")+"]"))
	if len(got) != 12 {
		t.Fatalf("got %d problems, want 12: %v", len(got), got)
	}
	for i, p := range got {
		if want := fmt.Sprintf("/%d", i); p.Path != want {
			t.Errorf("problem %d has path %s, want %s", i, p.Path, want)
		}
	}
}

func TestValidate_pointer_escapes_slash_and_tilde(t *testing.T) {
	sch := mustCompile(t, "odd", `{"properties":{"a/b":{"type":"string"},"c~d":{"type":"string"}}}`)
	got := sch.Validate(decode(t, `{"a/b":1,"c~d":2}`))
	want := []string{"/a~1b", "/c~0d"}
	if len(got) != 2 || got[0].Path != want[0] || got[1].Path != want[1] {
		t.Errorf("got %v, want paths %v", got, want)
	}
}
