package tool

import (
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/limit"
	"github.com/toolgate/toolgate/internal/policy"
	"github.com/toolgate/toolgate/internal/rules"
	"github.com/toolgate/toolgate/internal/schema"
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
	// Placeholders is the placeholder detector's configuration: the
	// definition's own, with NullableFields derived from the schema (every
	// property whose type admits null) unless the definition lists them.
	Placeholders rules.PlaceholderConfig
	// Limits are the compiled limits of Def.Limits, in order.
	Limits []*limit.Compiled
}

// Compiler compiles definitions with the rule and policy environments built
// once. It is safe for concurrent use.
type Compiler struct {
	rules  *rules.Compiler
	policy *policy.Compiler
	limits *limit.Compiler
}

// NewCompiler builds the CEL environments rules and policies compile in.
func NewCompiler() (*Compiler, error) {
	rc, err := rules.NewCompiler()
	if err != nil {
		return nil, err
	}
	pc, err := policy.NewCompiler()
	if err != nil {
		return nil, err
	}
	lc, err := limit.NewCompiler()
	if err != nil {
		return nil, err
	}
	return &Compiler{rules: rc, policy: pc, limits: lc}, nil
}

// Compile is NewCompiler followed by its Compile, for a one-off definition;
// code that compiles many keeps one Compiler.
func Compile(d Definition, revision uint64) (*Compiled, error) {
	tc, err := NewCompiler()
	if err != nil {
		return nil, err
	}
	return tc.Compile(d, revision)
}

// Compile compiles d. An error names the field once, without the prefixes
// of the packages underneath: "input_schema does not compile: ...",
// "rules[2]: undeclared reference to 'arg' ...", "policy.allow: ...",
// "executor.timeout: ...". It unwraps to the underlying package's error.
func (tc *Compiler) Compile(d Definition, revision uint64) (*Compiled, error) {
	c := &Compiled{Def: d, Revision: revision, Timeout: DefaultTimeout}
	var err error
	if c.Schema, err = schema.Compile(d.Name, d.InputSchema); err != nil {
		return nil, schemaError(d.Name, err)
	}
	if c.Rules, err = tc.rules.Compile(d.Rules); err != nil {
		return nil, rulesError(err)
	}
	if c.Policy, err = tc.policy.Compile(d.Policy); err != nil {
		return nil, policyError(err)
	}
	if d.Executor.Timeout != "" {
		if c.Timeout, err = time.ParseDuration(d.Executor.Timeout); err != nil || c.Timeout <= 0 {
			return nil, fmt.Errorf("executor.timeout: %q is not a positive duration such as 10s", d.Executor.Timeout)
		}
	}
	if err := groupFields(d.Executor); err != nil {
		return nil, err
	}
	if n := d.MaxRepairs(); n < 0 || n > 5 {
		return nil, fmt.Errorf("repair.max_attempts: %d is outside 0..5 (repair is bounded)", n)
	}
	if c.Limits, err = tc.compileLimits(d.Limits); err != nil {
		return nil, err
	}
	if d.Placeholders != nil {
		c.Placeholders = *d.Placeholders
	}
	if c.Placeholders.NullableFields == nil {
		c.Placeholders.NullableFields = NullableFields(d.InputSchema)
	}
	return c, nil
}

// CompileAll compiles every definition of one file, refusing the file as a
// whole at the first broken one. Errors read "FILE: tool NAME: FIELD: ...".
func CompileAll(file string, defs []Definition) ([]*Compiled, error) {
	tc, err := NewCompiler()
	if err != nil {
		return nil, err
	}
	out := make([]*Compiled, 0, len(defs))
	for _, d := range defs {
		c, err := tc.Compile(d, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: tool %s: %w", file, d.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}
