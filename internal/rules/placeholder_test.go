package rules

import (
	"slices"
	"testing"
)

func TestDetectPlaceholders_seed_values(t *testing.T) {
	args := decodeArgs(t, `{"email":"TODO","date":"soon","reason":"user said they want the thing","amount":null,
		"action":"cancel_subscription","customer_id":"cus_9821"}`)
	got := DetectPlaceholders(args, PlaceholderConfig{})
	want := []Violation{
		{Rule: -1, Field: "amount", Message: "amount is null: give the real value", Action: "reject"},
		{Rule: -1, Field: "date", Message: `date is a placeholder ("soon"): give the real value`, Action: "reject"},
		{Rule: -1, Field: "email", Message: `email is a placeholder ("TODO"): give the real value`, Action: "reject"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestDetectPlaceholders_flags_each_kind(t *testing.T) {
	for _, v := range []string{
		"TODO", "todo", " TBD ", "ASAP", "asap!", "Soon", "FIXME", "TODO: ask the user", "tbd - confirm",
		"<customer email>", "<email>", "{{name}}", "${id}", "[DATE]",
		"xxx", "XXXX-XXXX", "xx/xx/xxxx", "Lorem ipsum dolor sit amet", "",
		"   ", "?", "...", "jane@example.com", "ops@mail.example.org", "https://example.com/invoice", "a@b.test",
	} {
		if got := DetectPlaceholders(map[string]any{"f": v}, PlaceholderConfig{}); len(got) != 1 || got[0].Field != "f" {
			t.Errorf("%q: got %+v, want one violation on f", v, got)
		}
	}
}

func TestDetectPlaceholders_leaves_real_values_alone(t *testing.T) {
	for _, v := range []any{
		"cus_9821", "2025-03-01", "ann@acme.io", "https://acme.io/x", "Todos los días", "XXL", "xx",
		"soon-ho@acme.io", "Reschedule to a later date", "<b>bold</b> text", "Nobody at example dot com",
		true, false, decodeArgs(t, `{"n":0}`)["n"], []any{}, map[string]any{},
	} {
		if got := DetectPlaceholders(map[string]any{"f": v}, PlaceholderConfig{}); got != nil {
			t.Errorf("%#v: got %+v, want none", v, got)
		}
	}
}

func TestDetectPlaceholders_walks_nested_values_with_dotted_paths(t *testing.T) {
	args := decodeArgs(t, `{"customer":{"email":"x@example.net","name":"Ann"},"line_items":[{"sku":"A"},{"sku":"TBD","memo":""}]}`)
	var fields []string
	for _, v := range DetectPlaceholders(args, PlaceholderConfig{}) {
		fields = append(fields, v.Field)
	}
	if want := []string{"customer.email", "line_items.1.memo", "line_items.1.sku"}; !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
}

func TestDetectPlaceholders_is_configurable_per_tool_and_field(t *testing.T) {
	args := decodeArgs(t, `{"note":"","amount":null,"customer":{"email":"TODO"},"line_items":[{"memo":"TBD"},{"memo":"n/a"}],"ref":"pending"}`)
	for _, test := range []struct {
		name string
		cfg  PlaceholderConfig
		want []string
	}{
		{"default", PlaceholderConfig{}, []string{"amount", "customer.email", "line_items.0.memo", "note"}},
		{"disabled", PlaceholderConfig{Disabled: true}, nil},
		{"ignore_dotted_and_pointer", PlaceholderConfig{IgnoreFields: []string{"note", "/customer"}}, []string{"amount", "line_items.0.memo"}},
		{"ignore_with_wildcard", PlaceholderConfig{IgnoreFields: []string{"line_items.*.memo"}}, []string{"amount", "customer.email", "note"}},
		{"nullable_field", PlaceholderConfig{NullableFields: []string{"args.amount"}}, []string{"customer.email", "line_items.0.memo", "note"}},
		{"extra_words", PlaceholderConfig{ExtraWords: []string{"Pending", "N/A"}}, []string{"amount", "customer.email", "line_items.0.memo", "line_items.1.memo", "note", "ref"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			var fields []string
			for _, v := range DetectPlaceholders(args, test.cfg) {
				fields = append(fields, v.Field)
			}
			if !slices.Equal(fields, test.want) {
				t.Errorf("fields %v, want %v", fields, test.want)
			}
		})
	}
}
