package gates

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// Approvals is what the policy gate needs of the approvals bucket
// (*approval.Store). Create fails with approval.ErrExists, Update with
// approval.ErrConflict when the record changed since it was read; Get fails
// with approval.ErrMalformed (and the record's revision) for a record that
// cannot be trusted.
type Approvals interface {
	Get(ctx context.Context, callID string) (approval.Record, uint64, error)
	Create(ctx context.Context, r approval.Record) (uint64, error)
	Update(ctx context.Context, r approval.Record, rev uint64) (uint64, error)
}

// await puts a call that needs a human in approval_required and makes sure
// the approvals bucket holds a pending record for exactly this tool and
// these arguments. A pending record for the same call id made for other
// arguments is never replaced: a human may be reading it, and approving it
// must run what was shown, so the arriving call ends policy_rejected and the
// record stays as it is (kept). A decided record for other arguments (a
// repair after a decision, a call sent again) is replaced: its decision
// does not carry over. A record already decided for these very arguments
// (the same call arriving again) decides this delivery too.
func (p *Policy) await(ctx context.Context, e call.Envelope, why string) ([]call.Envelope, error) {
	if p.Approvals == nil {
		return nil, worker.Permanent("no_approvals_store", errors.New("gates: the policy gate has no approvals store, so a call needing approval cannot wait"))
	}
	now := p.Now()
	rec, rev, err := p.Approvals.Get(ctx, e.CallID)
	if err == nil && rec.State == approval.Pending && !rec.Matches(e.ToolName, e.Arguments) {
		return p.keepPending(e, rec)
	}
	if err := e.Move(streams.Policy, call.ApprovalRequired, now); err != nil {
		return nil, err
	}
	e.Note("waiting for a human decision: " + why)
	switch {
	case errors.Is(err, approval.ErrNotFound):
		rev = 0
	case errors.Is(err, approval.ErrMalformed) && rev != 0:
		// Nothing in it is trusted, least of all a decision: replace it.
		e.Note("the call's earlier approval record was malformed (" + err.Error() + "): a new approval is required")
	case err != nil:
		return nil, worker.Transient("approvals_store", 0, err)
	case rec.Matches(e.ToolName, e.Arguments):
		if rec.State == approval.Pending {
			return []call.Envelope{e}, nil // a redelivery: already waiting
		}
		return p.settle(e, rec)
	default:
		e.Note(fmt.Sprintf("the call changed since the approval request of %s (%s): a new approval is required",
			rec.RequestedAt.Format("2006-01-02T15:04:05Z07:00"), rec.State))
	}
	nr, err := approval.NewRecord(e, why, p.ApprovalTTL, now)
	if err != nil {
		return nil, worker.Permanent("approval_record", err)
	}
	if rev == 0 {
		_, err = p.Approvals.Create(ctx, nr)
	} else {
		_, err = p.Approvals.Update(ctx, nr, rev)
	}
	if errors.Is(err, approval.ErrExists) || errors.Is(err, approval.ErrConflict) {
		return nil, worker.Transient("approval_race", 0, err) // judge again against the record that won
	}
	if err != nil {
		return nil, worker.Transient("approvals_store", 0, err)
	}
	return []call.Envelope{e}, nil
}

// keepPending ends a call that arrived while a pending approval of the same
// call id waits for other arguments (or another tool): the record is not
// touched, so the decision a human makes is about what was shown.
func (p *Policy) keepPending(e call.Envelope, rec approval.Record) ([]call.Envelope, error) {
	msg := fmt.Sprintf("a pending approval of call %s for other arguments (hash %s, requested %s) exists and was kept: "+
		"this call was not run and not put up for approval; send it under a new call id, or have the pending one denied first (toolgate deny %s)",
		e.CallID, approval.ShortHash(rec.ArgsHash), rec.RequestedAt.Format("2006-01-02T15:04:05Z07:00"), e.CallID)
	if err := e.Move(streams.Policy, call.PolicyRejected, p.Now(), msg); err != nil {
		return nil, err
	}
	return []call.Envelope{e}, nil
}

// resume handles a waiting envelope published back after a decision. Only
// the record counts: an envelope whose tool or arguments differ from the
// record's, or whose record is still pending, is dropped without effect.
func (p *Policy) resume(ctx context.Context, e call.Envelope, t *tool.Compiled, registered bool) ([]call.Envelope, error) {
	if p.Approvals == nil {
		return nil, worker.Permanent("no_approvals_store", errors.New("gates: the policy gate has no approvals store"))
	}
	rec, _, err := p.Approvals.Get(ctx, e.CallID)
	switch {
	case errors.Is(err, approval.ErrNotFound):
		return nil, nil
	case errors.Is(err, approval.ErrMalformed):
		// The call would wait forever for a decision nobody can read: it
		// ends denied, recorded, and nothing runs.
		if err := e.Move(streams.Policy, call.ApprovalDenied, p.Now(), "the approval record of this call is malformed, so no decision can be read from it ("+err.Error()+"); send the call again to ask for a new approval"); err != nil {
			return nil, err
		}
		return []call.Envelope{e}, nil
	case err != nil:
		return nil, worker.Transient("approvals_store", 0, err)
	case !rec.Matches(e.ToolName, e.Arguments), rec.State == approval.Pending:
		return nil, nil
	}
	if rec.State == approval.Approved {
		// Approval says a human agrees; policy must still allow the caller
		// now (a role revoked, a tool removed since the request).
		why := ""
		if !registered {
			why = "tool " + e.ToolName + " is no longer registered"
		} else if d, err := p.decide(e, t.Policy); err != nil {
			return nil, err
		} else if !d.Allowed {
			why = d.Reason
		}
		if why != "" {
			if err := e.Move(streams.Policy, call.ApprovalDenied, p.Now(), why+" (it had been approved by "+rec.By+")"); err != nil {
				return nil, err
			}
			e.Note(rec.Note())
			return []call.Envelope{e}, nil
		}
	}
	return p.settle(e, rec)
}

// settle moves a waiting call by its decided record.
func (p *Policy) settle(e call.Envelope, rec approval.Record) ([]call.Envelope, error) {
	var err error
	switch rec.State {
	case approval.Approved:
		err = e.Move(streams.Policy, call.Approved, p.Now())
		// The policy seal covers the decision: who approved which hash.
		e.Approval = &call.Decision{By: rec.By, Hash: rec.ArgsHash, At: rec.DecidedAt.UTC()}
	case approval.Denied:
		msg := "denied by " + rec.By
		if rec.Reason != "" {
			msg += ": " + rec.Reason
		}
		err = e.Move(streams.Policy, call.ApprovalDenied, p.Now(), msg)
	case approval.Expired:
		err = e.Move(streams.Policy, call.ApprovalExpired, p.Now(), fmt.Sprintf("nobody approved it by %s", rec.ExpiresAt.Format("2006-01-02T15:04:05Z07:00")))
	default:
		return nil, worker.Permanent("approval_state", fmt.Errorf("gates: approval record of %s is in unknown state %q", e.CallID, rec.State))
	}
	if err != nil {
		return nil, err
	}
	e.Note(rec.Note())
	return []call.Envelope{e}, nil
}
