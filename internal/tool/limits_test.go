package tool

import (
	"strings"
	"testing"
)

const limitTools = `
tools:
  - name: refund
    input_schema: {type: object, properties: {customer_id: {type: string}, amount_cents: {type: integer}}}
    policy: {risk: write}
    limits:
      - {name: refunds_per_customer, key: 'tenant + ":" + args.customer_id', window: 1h, count: 5}
  - name: get_weather
    input_schema: {type: object}
    policy: {risk: read}
`

func TestLoad_limits_are_compiled_and_given_to_the_tools_they_cover(t *testing.T) {
	src := limitTools + `
limits:
  - {name: refund_budget, tools: [refund], key: tenant, window: 24h, weight: args.amount_cents, max: 50000}
  - {name: calls_per_principal, key: principal, window: 1m, count: 100, on_exceed: wait, max_wait: 30s}
`
	cs, err := loadAndCompile("tools.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range cs {
		for _, l := range c.Limits {
			got[c.Def.Name] = append(got[c.Def.Name], l.Def.Name)
		}
	}
	if strings.Join(got["refund"], ",") != "refunds_per_customer,refund_budget,calls_per_principal" || strings.Join(got["get_weather"], ",") != "calls_per_principal" {
		t.Fatalf("limits by tool: %v", got)
	}
}

func TestLoad_refuses_a_bad_limit_with_its_field_path(t *testing.T) {
	for _, c := range []struct{ name, limits, want string }{
		{"key_does_not_compile", `[{name: l, key: 'tenant + argz.x', window: 1h, count: 1}]`, "tools.yaml: limits[0].key: "},
		{"key_not_a_string", `[{name: l, key: '1 + 2', window: 1h, count: 1}]`, "tools.yaml: limits[0].key: expression evaluates to int, not string"},
		{"weight_not_an_int", `[{name: l, window: 1h, weight: '"a"', max: 3}]`, "tools.yaml: limits[0].weight: expression evaluates to string"},
		{"no_max", `[{name: ok, window: 1h, count: 1}, {name: l, window: 1h, weight: 'args.amount_cents'}]`, "tools.yaml: limits[1].max: required with weight"},
		{"bad_window", `[{name: l, window: soon, count: 1}]`, "tools.yaml: limits[0].window: \"soon\" is not a duration"},
		{"both", `[{name: l, window: 1h, count: 1, weight: '1', max: 2}]`, "tools.yaml: limits[0].count: give either"},
		{"wait_without_max_wait", `[{name: l, window: 1h, count: 1, on_exceed: wait}]`, "tools.yaml: limits[0].max_wait: "},
		{"bad_on_exceed", `[{name: l, window: 1h, count: 1, on_exceed: queue}]`, "tools.yaml: limits[0].on_exceed: \"queue\""},
		{"unknown_tool", `[{name: l, window: 1h, count: 1, tools: [refnud]}]`, "tools.yaml: limits[0].tools[0]: \"refnud\" is not a tool"},
		{"bad_name", `[{name: "a b", window: 1h, count: 1}]`, "tools.yaml: limits[0].name: "},
		{"same_name_two_ways", `[{name: refunds_per_customer, tools: [get_weather], window: 1h, count: 9}]`, "limit refunds_per_customer is defined two ways"},
		{"unknown_field", `[{name: l, window: 1h, count: 1, burst: 3}]`, "tools.yaml: limits: json: unknown field \"burst\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadAndCompile("tools.yaml", limitTools+"limits: "+c.limits+"\n")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	// a tool's own limit is named by its place in the tool
	_, err := loadAndCompile("tools.yaml", strings.Replace(limitTools, "count: 5", "count: -5", 1))
	if err == nil || !strings.Contains(err.Error(), "tools.yaml: tool refund: limits[0].count: -5 is not a positive") {
		t.Fatalf("got %v", err)
	}
}
