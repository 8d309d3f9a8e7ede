package gates

import (
	"context"
	"strings"

	"github.com/toolgate/toolgate/pkg/call"
	"github.com/toolgate/toolgate/pkg/policy"
	"github.com/toolgate/toolgate/streams"
)

// Policy is the policy gate: deny by default, the tool's allow expression,
// human approval for risky tools or calls a business rule sent to review,
// and dry runs.
type Policy struct {
	Tools Tools
	Now   Clock
}

// Handle implements pipeline.Gate.
func (p *Policy) Handle(ctx context.Context, e call.Envelope) ([]call.Envelope, error) {
	t, ok := p.Tools.Lookup(e.ToolName)
	if !ok {
		if err := e.Move(streams.Policy, call.PolicyRejected, p.Now(), "tool "+e.ToolName+" is no longer registered"); err != nil {
			return nil, err
		}
		return []call.Envelope{e}, nil
	}
	args, err := decode(e.Arguments)
	if err != nil {
		return nil, err
	}
	d := t.Policy.Decide(policy.Input{
		Tool: e.ToolName, Args: args, Tenant: e.Request.Tenant, Principal: e.Request.Principal, Roles: e.Request.Roles,
	})
	switch {
	case !d.Allowed:
		err = e.Move(streams.Policy, call.PolicyRejected, p.Now(), d.Reason)
	case d.DryRun || e.Request.DryRun:
		err = e.Move(streams.Policy, call.DryRun, p.Now())
		e.Note("dry run: every gate passed; " + e.ToolName + " would have executed with these arguments")
	case d.NeedsApproval || len(e.Review) > 0:
		err = e.Move(streams.Policy, call.ApprovalRequired, p.Now())
		why := d.Reason
		if len(e.Review) > 0 {
			why = strings.Join(e.Review, "; ")
		}
		e.Note("waiting for a human decision: " + why)
	default:
		err = e.Move(streams.Policy, call.Approved, p.Now())
	}
	if err != nil {
		return nil, err
	}
	return []call.Envelope{e}, nil
}
