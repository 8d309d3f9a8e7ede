package tool

import (
	"strings"
	"testing"
)

const mcpList = `{"jsonrpc":"2.0","id":1,"result":{"tools":[
  {"name":"get_weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}},
  {"name":"delete_file","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}]}}`

func TestPolicies_give_an_mcp_list_its_policies(t *testing.T) {
	defs, err := Load("tools.json", []byte(mcpList))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := LoadPolicies("policies.yaml", []byte(`
policies:
  get_weather: {risk: read}
  delete_file: {risk: irreversible, allow: "'admin' in roles", approval: true, dry_run: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := ps.Apply("policies.yaml", defs); err != nil {
		t.Fatal(err)
	}
	cs, err := CompileAll("tools.json", defs)
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].Policy.Risk() != "read" || cs[1].Policy.Risk() != "irreversible" || !cs[1].Def.Policy.DryRun {
		t.Fatalf("risks %q %q, want read and irreversible (dry run)", cs[0].Policy.Risk(), cs[1].Policy.Risk())
	}
}

func TestPolicies_refused_with_file_tool_and_field(t *testing.T) {
	for _, c := range []struct{ name, tools, policies, want string }{
		{"no_such_tool", mcpList, "policies: {get_wether: {risk: read}}", "policies.yaml: tool get_wether: no such tool in the tools file"},
		{"policy_twice", `[{"name":"get_weather","parameters":{"type":"object"},"policy":{"risk":"read"}}]`, "policies: {get_weather: {risk: read}}", "policies.yaml: tool get_weather: its definition has a policy already"},
		{"unknown_field", mcpList, "policies: {get_weather: {risk: read, approve: true}}", `policies.yaml: tool get_weather: policy: unknown field "approve"`},
		{"bad_risk", mcpList, "policies: {get_weather: {risk: low}}", `policies.yaml: tool get_weather: policy: risk "low" is unknown`},
		{"bad_allow", mcpList, "policies: {get_weather: {risk: read, allow: \"'a' in rolez\"}}", "policies.yaml: tool get_weather: policy.allow: "},
		{"approval_yes", mcpList, "policies: {get_weather: {risk: read, approval: yes}}", "policies.yaml: tool get_weather: policy.approval: expected bool, got string"},
		{"not_policies", mcpList, "get_weather: {risk: read}", `policies.yaml: want {policies: {TOOL: `},
		{"empty", mcpList, "", "policies.yaml: no policies found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defs, err := Load("tools.json", []byte(c.tools))
			if err != nil {
				t.Fatal(err)
			}
			ps, err := LoadPolicies("policies.yaml", []byte(c.policies))
			if err == nil {
				err = ps.Apply("policies.yaml", defs)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}
