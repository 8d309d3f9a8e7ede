package wire

import (
	"slices"
	"testing"
)

// The state machine as it stood in internal/call before it moved here: every
// status with its successors, in order.
func TestStatus_transitions_are_unchanged(t *testing.T) {
	want := map[Status][]Status{
		Received:         {Parsed, InvalidJSON, Truncated, TransportIncomplete, Rejected, Discarded, BatchAborted, NoToolCalls, StreamConflict, ResponseIDConflict},
		Parsed:           {Validated, SchemaInvalid, NoSuchTool, Discarded, BatchAborted},
		InvalidJSON:      {Repairing, Failed, BatchAborted},
		Truncated:        {Repairing, Failed, BatchAborted},
		SchemaInvalid:    {Repairing, Failed, BatchAborted},
		NoSuchTool:       {Repairing, Failed, BatchAborted},
		Repairing:        {Received, Failed, NeedsClarification, BatchAborted},
		Validated:        {BusinessValid, BusinessInvalid, BatchAborted},
		BusinessValid:    {Approved, ApprovalRequired, PolicyRejected, DryRun, BatchAborted},
		ApprovalRequired: {Approved, ApprovalDenied, ApprovalExpired, BatchAborted},
		Approved:         {Executed, ExecutionFailed, OutcomeUnknown, IdempotencyConflict, BatchAborted, DryRun, SealInvalid, LimitExceeded},
	}
	all := Statuses()
	seen := map[Status]bool{}
	for _, s := range all {
		if seen[s] {
			t.Errorf("Statuses lists %s twice", s)
		}
		seen[s] = true
		if !slices.Equal(Successors(s), want[s]) {
			t.Errorf("Successors(%s) = %v, want %v", s, Successors(s), want[s])
		}
		if s.Terminal() != (len(want[s]) == 0) {
			t.Errorf("%s.Terminal() = %v", s, s.Terminal())
		}
	}
	for from, tos := range want {
		if !seen[from] {
			t.Errorf("Statuses misses %s", from)
		}
		for _, to := range tos {
			if !seen[to] {
				t.Errorf("Statuses misses %s", to)
			}
			if !Legal(from, to) {
				t.Errorf("Legal(%s, %s) = false", from, to)
			}
		}
	}
	if len(all) != 31 { // every constant but OutputTooLarge, which ends a call through Abort
		t.Errorf("Statuses has %d entries, want 31", len(all))
	}
	if Legal(Executed, Received) || !OutputTooLarge.Terminal() {
		t.Error("an end status has successors")
	}
	s := Successors(Received)
	s[0] = Failed
	if Successors(Received)[0] != Parsed {
		t.Error("Successors shares its slice")
	}
}
