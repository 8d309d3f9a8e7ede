package repair

import (
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         Input
		wantRepair bool
		wantWhy    string
	}{
		{"invalid_json first attempt", Input{Failure: InvalidJSON}, true, "repair: attempt 1 of 1 for invalid_json"},
		{"truncated first attempt", Input{Failure: Truncated}, true, "repair: attempt 1 of 1"},
		{"schema_invalid first attempt", Input{Failure: SchemaInvalid}, true, "repair: attempt 1 of 1"},
		{"no_such_tool with valid tools", Input{Failure: NoSuchTool, Tool: "x", ValidTools: []string{"a"}}, true, "repair:"},
		{"default bound is one", Input{Failure: SchemaInvalid, Attempts: 1}, false, "exhausted: 1 of 1"},
		{"tool bound of three, second attempt", Input{Failure: SchemaInvalid, Attempts: 1, MaxAttempts: 3}, true, "attempt 2 of 3"},
		{"tool bound of three reached", Input{Failure: InvalidJSON, Attempts: 3, MaxAttempts: 3}, false, "exhausted: 3 of 3"},
		{"negative bound disables repair", Input{Failure: InvalidJSON, MaxAttempts: -1}, false, "exhausted: 0 of 0"},
		{"no_such_tool without valid tools", Input{Failure: NoSuchTool, Tool: "x"}, false, "no_valid_tools:"},
		{"business_invalid is never repaired", Input{Failure: "business_invalid"}, false, `not_repairable: "business_invalid"`},
		{"policy_rejected is never repaired", Input{Failure: "policy_rejected"}, false, "not_repairable:"},
		{"transport_incomplete is never repaired", Input{Failure: "transport_incomplete"}, false, "not_repairable:"},
		{"empty class is never repaired", Input{}, false, "not_repairable:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := Decide(tc.in)
			if ok != tc.wantRepair || !strings.Contains(why, tc.wantWhy) {
				t.Fatalf("Decide = %v, %q; want %v, containing %q", ok, why, tc.wantRepair, tc.wantWhy)
			}
		})
	}
}
