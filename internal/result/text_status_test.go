package result

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/pkg/wire"
)

// genericWording lists the terminal statuses that knowingly get Text's
// generic "(status x)" wording: no call result ever carries them to a model
// as its own class (rejected and discarded inputs).
// A new terminal failure status needs its own case in Text, or a line here.
func genericWording(s wire.Status) bool {
	switch s {
	case wire.Rejected, wire.Discarded:
		return true
	}
	return false
}

// sameWording lists the terminal statuses that knowingly share another's
// wording: a Failed call is phrased by its failure class (Outcome.Status is
// the class), so bare failed reads as an execution failure; no_tool_calls is
// a response-level outcome, never a call's.
func sameWording(s wire.Status) wire.Status {
	switch s {
	case wire.Failed:
		return wire.ExecutionFailed
	case wire.NoToolCalls:
		return wire.Executed
	}
	return s
}

func TestText_every_terminal_status_has_its_own_wording(t *testing.T) {
	seen := map[string]wire.Status{}
	terminals := append(call.Statuses(), call.OutputTooLarge)
	for _, s := range terminals {
		if !s.Terminal() {
			continue
		}
		got := Text(Outcome{Tool: "t", Status: string(s), OK: s.OK()})
		generic := strings.Contains(got, "(status "+string(s)+")")
		if generic != genericWording(s) {
			t.Errorf("%s: generic wording %v, want %v: %q", s, generic, genericWording(s), got)
		}
		if other, dup := seen[got]; dup && sameWording(other) != sameWording(s) {
			t.Errorf("%s and %s have the same text %q", s, other, got)
		}
		seen[got] = s
	}
	if len(seen) < 14 {
		t.Errorf("only %d terminal statuses checked", len(seen))
	}
}
