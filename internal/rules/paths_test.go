package rules

import (
	"slices"
	"strings"
	"testing"
)

func TestFieldPaths_follow_selects_and_comprehensions_but_not_has(t *testing.T) {
	rc, err := NewCompiler()
	if err != nil {
		t.Fatal(err)
	}
	for _, test := range []struct {
		expr string
		want []string
	}{
		{`args.customer.email != ""`, []string{"customer", "customer.email"}},
		{`args.line_items.all(i, i.quantity > 0)`, []string{"line_items", "line_items.*.quantity"}},
		{`args.line_items.all(n, i, i.sku != "")`, []string{"line_items", "line_items.*.sku"}},
		{`has(args.note) ? args.note.size() > 0 : true`, []string{"note"}},
		{`args.groups.all(g, g.items.all(i, i.n > 0))`, []string{"groups", "groups.*.items", "groups.*.items.*.n"}},
	} {
		t.Run(test.expr, func(t *testing.T) {
			a, _, err := CompileExpr(rc.env, test.expr)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range fieldPaths(a.NativeRep().Expr(), "args") {
				got = append(got, strings.Join(p, "."))
			}
			slices.Sort(got)
			got = slices.Compact(got)
			if !slices.Equal(got, test.want) {
				t.Errorf("got %v, want %v", got, test.want)
			}
		})
	}
}

func TestMissingFields_names_list_elements_by_index(t *testing.T) {
	args := decodeArgs(t, `{"groups":[{"items":[{"n":1},{}]},{"items":"x"},{}]}`)
	got := missingFields(args, [][]string{{"groups", "*", "items", "*", "n"}, {"owner"}})
	want := []string{"groups.0.items.1.n", "groups.2.items", "owner"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func FuzzEval_never_panics(f *testing.F) {
	f.Add(`{"customer_id":"c","currency":"USD","line_items":[{"sku":"A","quantity":2,"price_cents":1500}]}`)
	f.Add(`{"line_items":[{"quantity":1e400}]}`)
	set := mustCompile(f, invoiceRules)
	f.Fuzz(func(t *testing.T, s string) {
		args, err := tryDecode(s)
		if err != nil {
			return
		}
		set.Eval(args, Context{})
		DetectPlaceholders(args, PlaceholderConfig{})
	})
}
