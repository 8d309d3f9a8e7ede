package operate

import (
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
)

// expiry says when a pending approval expires and how long is left ("15:04:05
// (in 12m30s)"), or that it has expired; decided records show the time only.
// Without a decision by then the policy stage ends the call as
// approval_expired.
func expiry(r approval.Record, now time.Time) string {
	at := r.ExpiresAt.Local().Format(time.DateTime)
	if r.State != approval.Pending {
		return at
	}
	left := r.ExpiresAt.Sub(now)
	if left <= 0 {
		return at + " (expired " + roundDuration(-left) + " ago)"
	}
	return at + " (in " + roundDuration(left) + ")"
}

// expiredError says that r's call expired before a decision, that nothing
// runs, and where the call is now (issue 29: `approve` after an expiry said
// only "already expired"). It wraps approval.ErrDecided.
func expiredError(r approval.Record) error {
	return fmt.Errorf("%w: call %s expired at %s before anyone decided: it ends as approval_expired and nothing runs; its dead letter: `toolgate dlq ls --call %s`, its story: `toolgate status %s`",
		approval.ErrDecided, r.CallID, r.ExpiresAt.Local().Format(time.DateTime), r.CallID, r.CallID)
}

// ttlNote is the sentence that says how long approvals wait, for the record
// r (its own TTL, from its request and expiry times).
func ttlNote(r approval.Record) string {
	return fmt.Sprintf("a call waits %s for a decision, then ends as approval_expired (toolgate up --approval-ttl)", roundDuration(r.ExpiresAt.Sub(r.RequestedAt)))
}

// roundDuration is d to the second (to the minute from an hour on),
// without zero units: 15m, 1h, 12m30s.
func roundDuration(d time.Duration) string {
	if d >= time.Hour {
		d = d.Round(time.Minute)
	} else {
		d = d.Round(time.Second)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
