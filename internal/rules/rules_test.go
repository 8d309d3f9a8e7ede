package rules

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// invoiceRules are the seed's validateCreateInvoiceBusinessRules written in CEL. The
// total is a map() to per-line amounts and a sum(); CEL has no reduce.
var invoiceRules = []Rule{
	{Expr: `args.line_items.size() > 0`, Message: "At least one line item is required."},
	{Expr: `args.line_items.map(i, i.quantity * i.price_cents).sum() > 0`, Message: "Invoice total must be greater than zero."},
	{Expr: `!(args.currency == "USD" && args.line_items.map(i, i.quantity * i.price_cents).sum() > 100000000)`, // cents; CEL has no digit separators
		Message: "Invoices over $1,000,000 require manual review.", Action: "review"},
}

func tryDecode(s string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	err := dec.Decode(&m)
	return m, err
}

func decodeArgs(t testing.TB, s string) map[string]any {
	t.Helper()
	m, err := tryDecode(s)
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

func mustCompile(t testing.TB, rules []Rule) *Set {
	t.Helper()
	s, err := Compile(rules)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

func TestEval_create_invoice_seed_cases(t *testing.T) {
	set := mustCompile(t, invoiceRules)
	for _, test := range []struct {
		name string
		args string
		want []Violation
	}{
		{"valid_invoice_passes",
			`{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"A","quantity":2,"price_cents":1500}]}`,
			nil},
		{"empty_line_items_is_rejected",
			`{"customer_id":"cus_9821","currency":"USD","line_items":[]}`,
			[]Violation{
				{Rule: 0, Message: "At least one line item is required.", Action: "reject"},
				{Rule: 1, Message: "Invoice total must be greater than zero.", Action: "reject"},
			}},
		{"zero_total_is_rejected",
			`{"customer_id":"cus_9821","currency":"EUR","line_items":[{"sku":"A","quantity":3,"price_cents":0}]}`,
			[]Violation{{Rule: 1, Message: "Invoice total must be greater than zero.", Action: "reject"}}},
		{"usd_invoice_over_a_million_dollars_goes_to_review",
			`{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"A","quantity":2,"price_cents":60000000},{"sku":"B","quantity":1,"price_cents":1}]}`,
			[]Violation{{Rule: 2, Message: "Invoices over $1,000,000 require manual review.", Action: "review"}}},
		{"usd_invoice_of_exactly_a_million_dollars_passes",
			`{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"A","quantity":2,"price_cents":50000000}]}`,
			nil},
		{"eur_invoice_over_a_million_passes",
			`{"customer_id":"cus_9821","currency":"EUR","line_items":[{"sku":"A","quantity":2,"price_cents":60000000}]}`,
			nil},
		{"quantity_written_2.0_still_multiplies_as_an_integer",
			`{"customer_id":"c","currency":"USD","line_items":[{"sku":"A","quantity":2.0,"price_cents":1e2}]}`,
			nil},
		{"missing_line_items_names_the_field",
			`{"customer_id":"cus_9821","currency":"USD"}`,
			[]Violation{
				{Rule: 0, Field: "line_items", Message: "line_items is missing (needed to check: At least one line item is required.)", Action: "reject"},
				{Rule: 1, Field: "line_items", Message: "line_items is missing (needed to check: Invoice total must be greater than zero.)", Action: "reject"},
				{Rule: 2, Field: "line_items", Message: "line_items is missing (needed to check: Invoices over $1,000,000 require manual review.)", Action: "reject"},
			}},
		{"missing_quantity_in_one_item_names_the_item",
			`{"customer_id":"c","currency":"EUR","line_items":[{"sku":"A","quantity":1,"price_cents":5},{"sku":"B","price_cents":5}]}`,
			[]Violation{
				{Rule: 1, Field: "line_items.1.quantity", Message: "line_items.1.quantity is missing (needed to check: Invoice total must be greater than zero.)", Action: "reject"},
			}},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := set.Eval(decodeArgs(t, test.args), Context{})
			if !slices.Equal(got, test.want) {
				t.Errorf("violations:\n got %+v\nwant %+v", got, test.want)
			}
		})
	}
}

func TestEval_rules_read_the_request_context(t *testing.T) {
	set := mustCompile(t, []Rule{
		{Expr: `ctx.tenant == "acme" || !("refund" in args)`, Message: "Only acme may refund."},
		{Expr: `"finance" in ctx.roles || args.amount < 1000`, Message: "Amounts of 1000 or more need the finance role."},
		{Expr: `ctx.principal != "" && ctx.conversation.startsWith("conv_")`, Message: "Calls need a principal and a conversation."},
	})
	args := decodeArgs(t, `{"refund":true,"amount":5000}`)
	got := set.Eval(args, Context{Tenant: "acme", Principal: "ann", Conversation: "conv_1", Roles: []string{"finance"}})
	if got != nil {
		t.Errorf("acme finance: got %+v, want none", got)
	}
	got = set.Eval(args, Context{Tenant: "globex"})
	var rules []int
	for _, v := range got {
		rules = append(rules, v.Rule)
	}
	if !slices.Equal(rules, []int{0, 1, 2}) {
		t.Errorf("globex without roles: violated rules %v, want [0 1 2]: %+v", rules, got)
	}
}

func TestEval_never_panics_on_odd_arguments(t *testing.T) {
	set := mustCompile(t, invoiceRules)
	for _, args := range []string{
		`{"line_items":"many"}`,
		`{"line_items":[1,2,3]}`,
		`{"line_items":[{"quantity":"2","price_cents":1}]}`,
		`{"line_items":[{"quantity":null,"price_cents":1}]}`,
		`{"line_items":[{"quantity":9223372036854775807,"price_cents":2}]}`,
		`{"line_items":null}`,
	} {
		got := set.Eval(decodeArgs(t, args), Context{})
		if len(got) == 0 {
			t.Errorf("%s: no violations, want at least one", args)
		}
		for _, v := range got {
			if v.Message == "" || v.Action == "" {
				t.Errorf("%s: violation without message or action: %+v", args, v)
			}
		}
	}
	if got := set.Eval(nil, Context{}); len(got) != 3 {
		t.Errorf("nil args: got %+v, want three missing-field violations", got)
	}
}

func TestEval_overflowing_total_is_reported_not_wrapped(t *testing.T) {
	set := mustCompile(t, invoiceRules[1:2])
	got := set.Eval(decodeArgs(t, `{"line_items":[{"quantity":4611686018427387904,"price_cents":4}]}`), Context{})
	if len(got) != 1 || !strings.Contains(got[0].Message, "overflow") {
		t.Errorf("got %+v, want one violation about overflow", got)
	}
}

func TestEval_runaway_rule_stops_at_the_cost_limit(t *testing.T) {
	set := mustCompile(t, []Rule{{Expr: `lists.range(10000).all(i, lists.range(10000).all(j, i + j >= 0))`, Message: "never"}})
	got := set.Eval(map[string]any{}, Context{})
	if len(got) != 1 || !strings.Contains(got[0].Message, "limit") {
		t.Errorf("got %+v, want one violation naming the cost limit", got)
	}
}
