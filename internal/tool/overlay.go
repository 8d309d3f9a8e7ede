package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/policy"
)

// Policies are the policies of a policy file (`tools apply --policy FILE`),
// by tool name: the way to give a policy to tools whose definitions are not
// edited by hand, such as an MCP server's tools/list result or an OpenAI
// tools array exported from an application.
type Policies map[string]*policy.Policy

// LoadPolicies reads a policy file, JSON or YAML 1.2:
//
//	policies:
//	  get_weather: {risk: read}
//	  delete_customer_account: {risk: irreversible, allow: "'admin' in roles"}
//
// Unknown keys and policies that do not compile refuse the file; errors
// read "FILE: tool NAME: policy...".
func LoadPolicies(file string, data []byte) (Policies, error) {
	js, err := toJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var top struct {
		Policies map[string]json.RawMessage `json:"policies"`
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("%s: want {policies: {TOOL: {risk: read|write|irreversible, allow, approval, dry_run}}}: %w", file, err)
	}
	if len(top.Policies) == 0 {
		return nil, fmt.Errorf("%s: no policies found (want policies: {TOOL: {risk: ...}})", file)
	}
	pc, err := policy.NewCompiler()
	if err != nil {
		return nil, err
	}
	out := Policies{}
	for _, name := range sortedKeys(top.Policies) {
		var p policy.Policy
		dec := json.NewDecoder(bytes.NewReader(top.Policies[name]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("%s: tool %s: %w", file, name, policyDecodeError(err))
		}
		if _, err := pc.Compile(&p); err != nil {
			return nil, fmt.Errorf("%s: tool %s: %w", file, name, policyError(err))
		}
		out[name] = &p
	}
	return out, nil
}

// policyDecodeError names the policy field a decoder error is about.
func policyDecodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("policy.%s: expected %s, got %s", te.Field, te.Type, te.Value)
	}
	if rest, ok := strings.CutPrefix(err.Error(), "json: "); ok {
		return fmt.Errorf("policy: %s (known: risk, allow, approval, dry_run)", rest)
	}
	return fmt.Errorf("policy: %w", err)
}

// Apply gives each definition of defs named in ps its policy. A name that
// defs lack (a typo would leave the tool without one) and a tool that has a
// policy in its own definition too are errors naming policyFile.
func (ps Policies) Apply(policyFile string, defs []Definition) error {
	have := map[string]int{}
	for i, d := range defs {
		have[d.Name] = i
	}
	for _, name := range sortedKeys(ps) {
		i, ok := have[name]
		if !ok {
			return fmt.Errorf("%s: tool %s: no such tool in the tools file", policyFile, name)
		}
		if defs[i].Policy != nil {
			return fmt.Errorf("%s: tool %s: its definition has a policy already: keep one of the two", policyFile, name)
		}
		p := *ps[name]
		defs[i].Policy = &p
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
