package tool

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/schema"
)

// loadAndCompile is what `tools apply` does before storing anything.
func loadAndCompile(file, src string) ([]*Compiled, error) {
	defs, err := Load(file, []byte(src))
	if err != nil {
		return nil, err
	}
	return CompileAll(file, defs)
}

func TestLoad_broken_definition_error_names_file_tool_and_field_once(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string // substrings, in order
	}{
		{"schema_does_not_compile", `
tools:
  - name: create_invoice
    input_schema: {type: object, properties: {amount: {type: integr}}}
    policy: {risk: write}
`, []string{"tools.yaml: tool create_invoice: input_schema does not compile: ", "properties/amount/type"}},
		{"schema_external_ref", `
tools:
  - name: create_invoice
    input_schema: {type: object, properties: {a: {$ref: "https://example.com/a.json"}}}
    policy: {risk: write}
`, []string{"tools.yaml: tool create_invoice: input_schema refers to https://example.com/a.json"}},
		{"rule_does_not_compile", `
tools:
  - name: create_invoice
    input_schema: {type: object}
    rules:
      - {expr: "args.x > 0", message: ok}
      - {expr: "arg.line_items.size() > 0", message: At least one line item is required.}
    policy: {risk: write}
`, []string{"tools.yaml: tool create_invoice: rules[1]: ", "undeclared reference to 'arg'"}},
		{"rule_without_message", `
tools:
  - name: create_invoice
    input_schema: {type: object}
    rules: [{expr: "true"}]
    policy: {risk: write}
`, []string{"tools.yaml: tool create_invoice: rules[0]: message is empty"}},
		{"policy_allow_does_not_compile", `
tools:
  - name: delete_customer_account
    input_schema: {type: object}
    policy: {risk: irreversible, allow: "'admin' in rolez"}
`, []string{"tools.yaml: tool delete_customer_account: policy.allow: ", "rolez"}},
		{"policy_unknown_risk", `
tools:
  - name: delete_customer_account
    input_schema: {type: object}
    policy: {risk: dangerous}
`, []string{"tools.yaml: tool delete_customer_account: policy: risk \"dangerous\" is unknown"}},
		{"unknown_field", `
tools:
  - name: get_weather
    input_schema: {type: object}
    rulez: []
`, []string{"tools.yaml: tool get_weather: unknown field \"rulez\""}},
		{"unknown_nested_field", `
tools:
  - name: get_weather
    input_schema: {type: object}
    policy: {risk: read, approve: true}
`, []string{"tools.yaml: tool get_weather: policy: unknown field \"approve\""}},
		{"missing_schema", `
tools:
  - name: get_weather
    policy: {risk: read}
`, []string{"tools.yaml: tool get_weather: input_schema: required"}},
		{"bad_timeout", `
tools:
  - name: get_weather
    input_schema: {type: object}
    executor: {timeout: forever}
`, []string{"tools.yaml: tool get_weather: executor.timeout: \"forever\""}},
		{"duplicate", `
- {name: a, input_schema: {type: object}}
- {name: a, input_schema: {type: object}}
`, []string{"tools.yaml: tool a: defined twice"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadAndCompile("tools.yaml", c.src)
			if err == nil {
				t.Fatal("a broken definition was accepted")
			}
			msg := err.Error()
			rest := msg
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error %q lacks %q", msg, w)
				}
				rest = rest[i+len(w):]
			}
			for _, twice := range []string{": schema: ", "rules: rules", "policy: policy", "tool create_invoice: input_schema: schema"} {
				if strings.Contains(msg, twice) {
					t.Errorf("error %q repeats a prefix (%q)", msg, twice)
				}
			}
		})
	}
}

func TestCompile_error_still_unwraps_to_the_package_error(t *testing.T) {
	_, err := Compile(Definition{Name: "a", InputSchema: []byte(`{"$ref":"https://example.com/x.json"}`)}, 1)
	if !errors.Is(err, schema.ErrExternalRef) {
		t.Fatalf("error %v does not unwrap to schema.ErrExternalRef", err)
	}
}

func TestLoad_provider_forms_load_as_they_are(t *testing.T) {
	for _, c := range []struct{ name, src string }{
		{"openai_tools_array", `[{"type":"function","function":{"name":"get_weather","description":"Weather.","strict":true,
  "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}},
  "policy":{"risk":"read"}}]`},
		{"anthropic_tools", `{"tools":[{"name":"get_weather","description":"Weather.","cache_control":{"type":"ephemeral"},
  "input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"policy":{"risk":"read"}}]}`},
		{"mcp_tools_list_result", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get_weather","title":"Weather",
  "inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},
  "annotations":{"readOnlyHint":true},"policy":{"risk":"read"}}]}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs, err := loadAndCompile("tools.json", c.src)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 1 || cs[0].Def.Name != "get_weather" {
				t.Fatalf("got %d tools, want get_weather", len(cs))
			}
			if ps := cs[0].Schema.Validate(map[string]any{}); len(ps) != 1 || !strings.Contains(ps[0].String(), "city") {
				t.Fatalf("schema problems %v, want one naming city: the schema was not carried over", ps)
			}
			if cs[0].Policy.Risk() != "read" {
				t.Fatalf("risk %q, want read: toolgate's keys beside a provider form are kept", cs[0].Policy.Risk())
			}
		})
	}
}

func TestLoad_example_tools_compile(t *testing.T) {
	data, err := os.ReadFile("../../examples/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := loadAndCompile("tools.yaml", string(data))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Def.Name)
	}
	if want := []string{"create_invoice", "get_weather", "delete_customer_account"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
}
