package tool

import (
	"reflect"
	"testing"

	"github.com/toolgate/toolgate/internal/rules"
)

func TestNullableFields_derived_from_the_schema(t *testing.T) {
	for _, c := range []struct {
		name, schema string
		want         []string
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, nil},
		{"type_list", `{"type":"object","properties":{"note":{"type":["string","null"]},"a":{"type":"string"}}}`, []string{"note"}},
		{"any_of_null", `{"type":"object","properties":{"due":{"anyOf":[{"type":"string","format":"date"},{"type":"null"}]}}}`, []string{"due"}},
		{"enum_and_const", `{"type":"object","properties":{"e":{"enum":["a",null]},"c":{"const":null}}}`, []string{"c", "e"}},
		{"nested_and_items", `{"type":"object","properties":{"customer":{"type":"object","properties":{"phone":{"type":["string","null"]}}},
			"line_items":{"type":"array","items":{"type":"object","properties":{"memo":{"type":["string","null"]}}}}}}`,
			[]string{"customer.phone", "line_items.*.memo"}},
		{"not_json", `{`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NullableFields([]byte(c.schema)); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("NullableFields = %v, want %v", got, c.want)
			}
		})
	}
}

func TestCompile_null_is_a_placeholder_only_where_the_schema_does_not_allow_it(t *testing.T) {
	d := Definition{Name: "t", InputSchema: []byte(`{"type":"object","properties":{"note":{"type":["string","null"]},"amount":{"type":["number"]}}}`)}
	c, err := Compile(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	vs := rules.DetectPlaceholders(map[string]any{"note": nil, "amount": nil}, c.Placeholders)
	if len(vs) != 1 || vs[0].Field != "amount" {
		t.Fatalf("violations %+v, want only amount (note is nullable in the schema)", vs)
	}
}

func TestCompile_configured_nullable_fields_win_over_the_schema(t *testing.T) {
	d := Definition{
		Name: "t", InputSchema: []byte(`{"type":"object","properties":{"note":{"type":["string","null"]}}}`),
		Placeholders: &rules.PlaceholderConfig{NullableFields: []string{}},
	}
	c, err := Compile(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	if vs := rules.DetectPlaceholders(map[string]any{"note": nil}, c.Placeholders); len(vs) != 1 {
		t.Fatalf("violations %+v, want note flagged: the definition says no field is nullable", vs)
	}
}
