// Package policy decides who may call a tool: the pure core of the policy gate. A tool
// without a policy cannot run.
package policy

import (
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"

	"github.com/toolgate/toolgate/internal/rules"
)

// Risk levels.
const (
	RiskRead         = "read"
	RiskWrite        = "write"
	RiskIrreversible = "irreversible"
)

// Policy is who may call one tool and under what conditions.
type Policy struct {
	// Risk is read, write or irreversible.
	Risk string `json:"risk"`
	// Allow is a CEL condition over principal, roles, tenant, tool and args that is true
	// when the caller may call the tool, e.g. "'admin' in roles". Empty allows every
	// caller (risk and approval still apply).
	Allow string `json:"allow,omitempty"`
	// Approval says whether a human must approve each call. Unset (nil) means: required
	// for irreversible tools, not for read and write tools; set it to false to run an
	// irreversible tool without approval.
	Approval *bool `json:"approval,omitempty"`
	// DryRun makes every call of the tool a dry run: all gates run, nothing executes.
	DryRun bool `json:"dry_run,omitempty"`
}

// Input is what a decision is made on.
type Input struct {
	Tool      string
	Args      map[string]any
	Tenant    string
	Principal string
	Roles     []string
}

// Decision is the policy gate's verdict on one call.
type Decision struct {
	Allowed bool `json:"allowed"`
	// Reason says why, in words for the caller and the audit log.
	Reason string `json:"reason"`
	// NeedsApproval is true when an allowed call must wait for a human.
	NeedsApproval bool   `json:"needs_approval"`
	DryRun        bool   `json:"dry_run"`
	Risk          string `json:"risk"`
}

// Compiled is a policy ready to decide. It is safe for concurrent use.
type Compiled struct {
	p        *Policy // nil: no policy, deny
	prg      cel.Program
	approval bool
}

// Compiler compiles policies in one CEL environment, built once by
// NewCompiler. It is safe for concurrent use.
type Compiler struct {
	env *cel.Env
}

// NewCompiler builds the environment an allow expression is compiled in:
// principal, roles, tenant, tool and args.
func NewCompiler() (*Compiler, error) {
	env, err := rules.NewCallEnv()
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return &Compiler{env: env}, nil
}

// Compile is NewCompiler followed by its Compile, for a one-off policy;
// code that compiles many keeps one Compiler.
func Compile(p *Policy) (*Compiled, error) {
	c, err := NewCompiler()
	if err != nil {
		return nil, err
	}
	return c.Compile(p)
}

// Compile checks and compiles p. A nil p compiles to a policy that denies every call
// ("tool X has no policy: add policy to its definition"): deny by default.
func (c *Compiler) Compile(p *Policy) (*Compiled, error) {
	if p == nil {
		return &Compiled{}, nil
	}
	switch p.Risk {
	case RiskRead, RiskWrite, RiskIrreversible:
	default:
		return nil, fmt.Errorf("policy: risk %q is unknown: use %q, %q or %q", p.Risk, RiskRead, RiskWrite, RiskIrreversible)
	}
	cp := *p
	out := &Compiled{p: &cp, approval: p.Risk == RiskIrreversible}
	if p.Approval != nil {
		out.approval = *p.Approval
	}
	if strings.TrimSpace(p.Allow) != "" {
		_, prg, err := rules.CompileExpr(c.env, p.Allow)
		if err != nil {
			return nil, fmt.Errorf("policy: allow: %w", err)
		}
		out.prg = prg
	}
	return out, nil
}

// Decide says whether in may run. It denies when there is no policy, when allow is
// false, and when allow cannot be evaluated (a missing argument, a wrong type): the gate
// fails closed. An allowed decision carries whether a human must approve and whether
// the call is a dry run.
func (c *Compiled) Decide(in Input) Decision {
	if c == nil || c.p == nil {
		return Decision{Reason: fmt.Sprintf("tool %s has no policy: add policy to its definition, or give it one with toolgate tools apply --policy FILE", in.Tool)}
	}
	d := Decision{Risk: c.p.Risk, DryRun: c.p.DryRun}
	if c.prg != nil {
		ok, err := c.allow(in)
		if err != nil {
			d.Reason = fmt.Sprintf("the policy of %s cannot be checked (%v), so the call is denied: it allows only when %s", in.Tool, err, c.p.Allow)
			return d
		}
		if !ok {
			d.Reason = fmt.Sprintf("%s may not call %s: the policy allows only when %s", who(in), in.Tool, c.p.Allow)
			return d
		}
	}
	d.Allowed = true
	d.NeedsApproval = c.approval
	switch {
	case c.approval:
		d.Reason = fmt.Sprintf("%s may call %s (risk %s) once a human approves", who(in), in.Tool, c.p.Risk)
	default:
		d.Reason = fmt.Sprintf("%s may call %s (risk %s)", who(in), in.Tool, c.p.Risk)
	}
	return d
}

func (c *Compiled) allow(in Input) (ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			ok, err = false, fmt.Errorf("policy: allow panicked: %v", p)
		}
	}()
	out, _, err := c.prg.Eval(rules.CallVars(in.Tenant, in.Principal, in.Tool, in.Roles, in.Args))
	if err != nil {
		return false, err
	}
	b, isBool := out.(types.Bool)
	if !isBool {
		return false, fmt.Errorf("allow returned %s, not true or false", out.Type())
	}
	return bool(b), nil
}

// who names the caller for a reason: principal "bob" (roles: support) of
// tenant acme; a call without a principal is principal none (no roles).
func who(in Input) string {
	s := "principal none"
	if in.Principal != "" {
		s = fmt.Sprintf("principal %q", in.Principal)
	}
	if len(in.Roles) == 0 {
		s += " (no roles)"
	} else {
		s += " (roles: " + strings.Join(in.Roles, ", ") + ")"
	}
	if in.Tenant != "" {
		s += " of tenant " + in.Tenant
	}
	return s
}

// Risk returns the policy's risk level, "" when there is no policy.
func (c *Compiled) Risk() string {
	if c == nil || c.p == nil {
		return ""
	}
	return c.p.Risk
}
