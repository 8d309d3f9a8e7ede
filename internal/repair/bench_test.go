package repair

import (
	"strings"
	"testing"
)

func BenchmarkPrompt_schema_invalid_with_long_arguments(b *testing.B) {
	in := invoiceInput(SchemaInvalid, `{"note":"`+strings.Repeat("x", 5000)+`"}`, "/amount: required", "/customer_id: required")
	b.ReportAllocs()
	for b.Loop() {
		_ = Prompt(in)
	}
}

func BenchmarkPrompt_invalid_json_position(b *testing.B) {
	in := invoiceInput(InvalidJSON, `{"customer_id":"c1","lines":[`+strings.Repeat(`{"sku":"a","qty":1},`, 50)+`]}`, "parse: invalid_json")
	b.ReportAllocs()
	for b.Loop() {
		_ = Prompt(in)
	}
}

func BenchmarkClosest_twenty_tools(b *testing.B) {
	valid := make([]string, 20)
	for i := range valid {
		valid[i] = "tool_number_" + strings.Repeat("x", i) + "_action"
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Closest("tool_numbr_xxxxx_action", valid)
	}
}
