package streams

import (
	"testing"

	"github.com/toolgate/toolgate/internal/call"
)

// TestRoute_pins_next_and_entry: the routing as it stood when it moved here
// from pipeline, for every status and every stage, so that deriving it from
// the stage table cannot change it unnoticed.
func TestRoute_pins_next_and_entry(t *testing.T) {
	next := map[call.Status]string{
		call.Received: Parse, call.Parsed: Validate, call.Validated: Business, call.BusinessValid: Policy,
		call.Approved: Execute, call.InvalidJSON: Repair, call.Truncated: Repair, call.SchemaInvalid: Repair,
		call.NoSuchTool: Repair,
	}
	for _, s := range append(call.Statuses(), call.OutputTooLarge) {
		if got := Next(s); got != next[s] {
			t.Errorf("Next(%s) = %q, want %q", s, got, next[s])
		}
	}
	entry := map[string]call.Status{
		Parse: call.Received, Validate: call.Parsed, Business: call.Validated, Policy: call.BusinessValid, Execute: call.Approved,
	}
	for _, st := range append(Names(), AccumulateTimer, "nope") {
		if got := Entry(st); got != entry[st] {
			t.Errorf("Entry(%s) = %q, want %q", st, got, entry[st])
		}
	}
}
