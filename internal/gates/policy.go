package gates

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/policy"
	"github.com/toolgate/toolgate/streams"
)

// Policy is the policy gate: deny by default, the tool's allow expression,
// human approval for risky tools or calls a business rule sent to review,
// and dry runs.
//
// A call that needs approval waits in Approvals (durably, outside the
// message stream) in approval_required; its status record says so. A
// decision publishes the waiting envelope back to this gate, which then
// trusts only the approval record, and only if the record was made for the
// same tool name and argument hash: anything changed needs a new approval.
type Policy struct {
	Tools     Tools
	Approvals Approvals
	// ApprovalTTL is how long a call waits for a decision; default
	// approval.DefaultTTL (15 min).
	ApprovalTTL time.Duration
	Now         Clock
}

// Handle implements pipeline.Gate.
func (p *Policy) Handle(ctx context.Context, e call.Envelope) ([]call.Envelope, error) {
	t, ok := p.Tools.Lookup(e.ToolName)
	if e.Status == call.ApprovalRequired {
		return p.resume(ctx, e, t, ok)
	}
	if !ok {
		if err := e.Move(streams.Policy, call.PolicyRejected, p.Now(), "tool "+e.ToolName+" is no longer registered"); err != nil {
			return nil, err
		}
		return []call.Envelope{e}, nil
	}
	d, err := p.decide(e, t.Policy)
	if err != nil {
		return nil, err
	}
	switch {
	case !d.Allowed:
		err = e.Move(streams.Policy, call.PolicyRejected, p.Now(), d.Reason)
	case d.DryRun || e.Request.DryRun:
		err = e.Move(streams.Policy, call.DryRun, p.Now())
		e.Note("dry run: every gate passed; " + e.ToolName + " would have executed with these arguments")
		e.Result = wouldExecute(e)
	case d.NeedsApproval || len(e.Review) > 0:
		why := d.Reason
		if len(e.Review) > 0 {
			why = strings.Join(e.Review, "; ")
		}
		return p.await(ctx, e, why)
	default:
		err = e.Move(streams.Policy, call.Approved, p.Now())
	}
	if err != nil {
		return nil, err
	}
	return []call.Envelope{e}, nil
}

func (p *Policy) decide(e call.Envelope, c *policy.Compiled) (policy.Decision, error) {
	args, err := decode(e.Arguments)
	if err != nil {
		return policy.Decision{}, err
	}
	return c.Decide(policy.Input{
		Tool: e.ToolName, Args: args, Tenant: e.Request.Tenant, Principal: e.Request.Principal, Roles: e.Request.Roles,
	}), nil
}

// wouldExecute is a dry run's result: the call that would have run.
func wouldExecute(e call.Envelope) json.RawMessage {
	b, err := json.Marshal(map[string]any{"dry_run": true, "would_execute": map[string]any{"tool": e.ToolName, "arguments": e.Arguments}})
	if err != nil {
		return nil
	}
	return b
}
