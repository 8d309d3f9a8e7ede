package operate

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

func TestExpiry_time_left_expired_and_decided(t *testing.T) {
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.Local)
	r := approval.Record{State: approval.Pending, RequestedAt: now.Add(-3 * time.Minute), ExpiresAt: now.Add(12*time.Minute + 30*time.Second)}
	if got := expiry(r, now); !strings.HasSuffix(got, "(in 12m30s)") {
		t.Errorf("pending: %q", got)
	}
	if got := ttlNote(r); !strings.HasPrefix(got, "a call waits 15m30s for a decision, then ends as approval_expired") {
		t.Errorf("ttl: %q", got)
	}
	if got := expiry(r, now.Add(time.Hour)); !strings.HasSuffix(got, "(expired 47m30s ago)") {
		t.Errorf("past due: %q", got)
	}
	r.State = approval.Approved
	if got := expiry(r, now); strings.Contains(got, "(") {
		t.Errorf("decided: %q, want the time only", got)
	}
	for d, want := range map[time.Duration]string{15 * time.Minute: "15m", time.Hour: "1h", 90 * time.Minute: "1h30m", 1500 * time.Millisecond: "2s"} {
		if got := roundDuration(d); got != want {
			t.Errorf("roundDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

var timeLeft = regexp.MustCompile(`\(in (59m\d+s|1h)\)`)

// Before, nothing said that an approval expires: approvals ls printed a
// bare time, approvals show and approve's prompt a bare "expires" line.
// Now each shows the time left and how long a call waits.
func TestApprovals_say_when_each_expires(t *testing.T) {
	url, _, _ := pendingApproval(t, "c-1", `{"customer_id":"cus_1"}`) // a one-hour TTL
	for _, args := range [][]string{{"approvals", "ls", "--nats", url}, {"approvals", "show", "c-1", "--nats", url}} {
		out, code := clitest.RunMain(t, nil, args...)
		if code != 0 {
			t.Fatalf("toolgate %v: exit %d\n%s", args, code, out)
		}
		if !timeLeft.MatchString(out) {
			t.Errorf("toolgate %v shows no time left:\n%s", args, out)
		}
		for _, want := range []string{"a call waits 1h for a decision, then ends as approval_expired", "--approval-ttl"} {
			if !strings.Contains(out, want) {
				t.Errorf("toolgate %v does not say %q:\n%s", args, want, out)
			}
		}
	}
	var out bytes.Buffer
	_ = decide("approve", approval.Approved, []string{"c-1", "--by", "carol", "--nats", url}, console{in: strings.NewReader("n\n"), out: &out, terminal: true})
	if !timeLeft.MatchString(out.String()) || !strings.Contains(out.String(), "then ends as approval_expired") {
		t.Errorf("approve's prompt does not say when the call expires:\n%s", out.String())
	}
}
