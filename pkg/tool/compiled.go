package tool

import (
	"fmt"
	"time"

	"github.com/toolgate/toolgate/pkg/policy"
	"github.com/toolgate/toolgate/pkg/rules"
	"github.com/toolgate/toolgate/pkg/schema"
)

// DefaultTimeout is an executor's timeout when the definition sets none.
const DefaultTimeout = 10 * time.Second

// Compiled is a definition ready for the gates: schema, rules and policy
// compiled once per revision.
type Compiled struct {
	Def      Definition
	Revision uint64
	Schema   *schema.Schema
	Rules    *rules.Set
	Policy   *policy.Compiled
	Timeout  time.Duration
}

// Compile compiles d. Errors name the field: "input_schema: ...",
// "rules: rule 2: ...", "policy: ...", "executor.timeout: ...".
func Compile(d Definition, revision uint64) (*Compiled, error) {
	c := &Compiled{Def: d, Revision: revision, Timeout: DefaultTimeout}
	var err error
	if c.Schema, err = schema.Compile(d.Name, d.InputSchema); err != nil {
		return nil, fmt.Errorf("input_schema: %w", err)
	}
	if c.Rules, err = rules.Compile(d.Rules); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	if c.Policy, err = policy.Compile(d.Policy); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if d.Executor.Timeout != "" {
		if c.Timeout, err = time.ParseDuration(d.Executor.Timeout); err != nil || c.Timeout <= 0 {
			return nil, fmt.Errorf("executor.timeout: %q is not a positive duration such as 10s", d.Executor.Timeout)
		}
	}
	if n := d.MaxRepairs(); n < 0 || n > 5 {
		return nil, fmt.Errorf("repair.max_attempts: %d is outside 0..5 (repair is bounded)", n)
	}
	return c, nil
}

// CompileAll compiles every definition of one file, refusing the file as a
// whole at the first broken one.
func CompileAll(file string, defs []Definition) ([]*Compiled, error) {
	out := make([]*Compiled, 0, len(defs))
	for _, d := range defs {
		c, err := Compile(d, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: tool %s: %w", file, d.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}
