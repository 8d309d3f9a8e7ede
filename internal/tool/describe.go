package tool

import (
	"strings"

	"github.com/toolgate/toolgate/internal/policy"
	"github.com/toolgate/toolgate/pkg/wire"
)

// PolicyColumns are the risk and approval of d's policy as the policy gate
// applies it (approval unset: required for irreversible tools only), as
// `toolgate tools ls` and the console show them.
func (d Definition) PolicyColumns() (risk, approval string) {
	p := d.Policy
	if p == nil {
		return "none: every call denied", "-"
	}
	risk = p.Risk
	if p.DryRun {
		risk += " (dry run)"
	}
	need := p.Risk == policy.RiskIrreversible
	if p.Approval != nil {
		need = *p.Approval
	}
	if need {
		return risk, "required"
	}
	return risk, "no"
}

// Where says where an approved call of d goes: its executor's type and
// address.
func (d Definition) Where() string {
	switch {
	case d.Executor.Type == "http":
		return "http " + d.Executor.URL
	case d.Executor.Type == "mcp" && d.Executor.Command != "":
		return "mcp " + strings.Join(append([]string{d.Executor.Command}, d.Executor.Args...), " ")
	case d.Executor.Type == "mcp":
		return "mcp " + d.Executor.URL
	case d.Executor.Subject != "":
		return "nats " + d.Executor.Subject
	}
	return "nats " + wire.Exec(d.Name)
}
