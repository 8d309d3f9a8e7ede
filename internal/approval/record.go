// Package approval keeps the calls that wait for a human decision in the
// JetStream key-value bucket toolgate_approvals, one record per call id, and
// resumes them: a decision (approve, deny, or expiry by the sweeper) is
// written with compare-and-set on the record's revision, then the waiting
// envelope is published back to the policy gate, which reads the record and
// moves the call on. An approval is bound to the exact tool name and
// argument hash it was given for; the policy gate re-checks both.
package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/canon"
)

// DefaultTTL is how long a call waits for a decision before it ends as
// approval_expired.
const DefaultTTL = 15 * time.Minute

// State is where an approval stands.
type State string

// States of a record. Pending is the only one a decision may leave.
const (
	Pending  State = "pending"
	Approved State = "approved"
	Denied   State = "denied"
	Expired  State = "expired"
)

// Record is what the approvals bucket holds per call id: the call as it was
// shown, what was decided, by whom and why.
type Record struct {
	CallID      string          `json:"call_id"`
	Tool        string          `json:"tool"`
	ArgsHash    string          `json:"args_hash"` // sha256 of the canonical arguments, hex
	Envelope    json.RawMessage `json:"envelope"`  // the whole waiting envelope, status approval_required
	Reason      string          `json:"reason,omitempty"`
	RequestedAt time.Time       `json:"requested_at"`
	ExpiresAt   time.Time       `json:"expires_at"`
	State       State           `json:"state"`
	By          string          `json:"by,omitempty"`
	Why         string          `json:"why,omitempty"` // why a human must decide (policy or review rule)
	DecidedAt   time.Time       `json:"decided_at,omitzero"`
	// Resumed is set once the decided envelope was published back to the
	// policy gate; the sweeper republishes decided records without it.
	Resumed bool `json:"resumed,omitempty"`
}

// ArgsHash is the hex sha256 of the canonical form of args, so that two
// spellings of the same arguments hash alike and any change does not.
func ArgsHash(args json.RawMessage) string {
	b, err := canon.JSON(args)
	if err != nil {
		b = args // not JSON: hash the bytes as they are
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// NewRecord is a pending record for e, which must already be in
// approval_required; why says why a human must decide.
func NewRecord(e call.Envelope, why string, ttl time.Duration, now time.Time) (Record, error) {
	if e.Status != call.ApprovalRequired {
		return Record{}, fmt.Errorf("approval: call %s is %s, not %s", e.CallID, e.Status, call.ApprovalRequired)
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	body, err := e.Marshal()
	if err != nil {
		return Record{}, fmt.Errorf("approval: %w", err)
	}
	return Record{
		CallID: e.CallID, Tool: e.ToolName, ArgsHash: ArgsHash(e.Arguments), Envelope: body, Why: why,
		RequestedAt: now.UTC(), ExpiresAt: now.Add(ttl).UTC(), State: Pending,
	}, nil
}

// Matches reports whether the record was made for exactly this tool and
// these arguments: an approval never carries over to anything else.
func (r Record) Matches(tool string, args json.RawMessage) bool {
	return r.Tool == tool && r.ArgsHash == ArgsHash(args)
}

// Due reports whether a pending record has passed its expiry.
func (r Record) Due(now time.Time) bool { return r.State == Pending && !now.Before(r.ExpiresAt) }

// Decided returns r moved from pending to state, by whom and why.
func (r Record) Decided(state State, by, reason string, now time.Time) Record {
	r.State, r.By, r.Reason, r.DecidedAt, r.Resumed = state, by, reason, now.UTC(), false
	return r
}

// Note is the history remark for the decision on r.
func (r Record) Note() string {
	var s string
	switch r.State {
	case Approved:
		s = "approved by " + r.By
	case Denied:
		s = "denied by " + r.By
	case Expired:
		return fmt.Sprintf("approval expired: no decision by %s", r.ExpiresAt.Format(time.RFC3339))
	default:
		return "waiting for a human decision"
	}
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}
