package gates

import (
	"context"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/rules"
	"github.com/toolgate/toolgate/streams"
)

// Business is the business gate: the tool's rules and the placeholder
// detector. A violated rule is not repaired: the call ends business_invalid
// and its result asks the model or the user to clarify. A rule with action
// "review" routes the call to a human instead.
type Business struct {
	Tools Tools
	Now   Clock
}

// Handle implements pipeline.Gate.
func (b *Business) Handle(ctx context.Context, e call.Envelope) ([]call.Envelope, error) {
	t, ok := b.Tools.Lookup(e.ToolName)
	if !ok { // removed since validation: judge it again from the start
		e.ValidTools = nil
		if err := e.Move(streams.Business, call.BusinessInvalid, b.Now(), "tool "+e.ToolName+" is no longer registered"); err != nil {
			return nil, err
		}
		return []call.Envelope{e}, nil
	}
	args, err := decode(e.Arguments)
	if err != nil {
		return nil, err
	}
	var problems, review []string
	vs := rules.DetectPlaceholders(args, t.Placeholders)
	vs = append(vs, t.Rules.Eval(args, rules.Context{
		Tenant: e.Request.Tenant, Principal: e.Request.Principal, Roles: e.Request.Roles, Conversation: e.Request.Conversation,
	})...)
	for _, v := range vs {
		if v.Action == rules.ActionReview {
			review = append(review, v.Message)
		} else {
			problems = append(problems, v.Message)
		}
	}
	if len(problems) > 0 {
		if err := e.Move(streams.Business, call.BusinessInvalid, b.Now(), problems...); err != nil {
			return nil, err
		}
		return []call.Envelope{e}, nil
	}
	e.Review = review
	if err := e.Move(streams.Business, call.BusinessValid, b.Now()); err != nil {
		return nil, err
	}
	if len(review) > 0 {
		e.Note("routed to manual review by a business rule")
	}
	return []call.Envelope{e}, nil
}
