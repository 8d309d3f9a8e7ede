package call

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func TestEnvelope_happy_path_records_every_gate(t *testing.T) {
	e := New("chatcmpl-1", 0, t0)
	for i, step := range []struct {
		stage string
		to    Status
	}{
		{"parse", Parsed}, {"validate", Validated}, {"business", BusinessValid},
		{"policy", Approved}, {"execute", Executed},
	} {
		if err := e.Move(step.stage, step.to, t0.Add(time.Duration(i+1)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if !e.Status.Terminal() || !e.Status.OK() {
		t.Fatalf("status %s: want terminal and ok", e.Status)
	}
	var stages []string
	for _, s := range e.History {
		stages = append(stages, s.Stage)
	}
	if got, want := len(e.History), 6; got != want {
		t.Fatalf("history %v: %d steps, want %d", stages, got, want)
	}
}

func TestEnvelope_illegal_transition_fails_loudly(t *testing.T) {
	for _, test := range []struct {
		name     string
		from, to Status
	}{
		{"execute_from_received", Received, Executed},
		{"execute_after_schema_invalid", SchemaInvalid, Executed},
		{"leave_terminal", Executed, Received},
		{"repair_a_business_failure", BusinessInvalid, Repairing},
		{"skip_policy", Validated, Approved},
	} {
		t.Run(test.name, func(t *testing.T) {
			e := New("r", 0, t0)
			e.Status = test.from
			err := e.Move("x", test.to, t0)
			if !errors.Is(err, ErrIllegalTransition) {
				t.Fatalf("Move %s -> %s: err %v, want ErrIllegalTransition", test.from, test.to, err)
			}
			if e.Status != test.from {
				t.Fatalf("status changed to %s on an illegal move", e.Status)
			}
		})
	}
}

func TestStatus_every_status_reaches_a_terminal(t *testing.T) {
	// From every non-terminal status some path must end, so no call can be
	// stuck by construction.
	for _, from := range Statuses() {
		seen := map[Status]bool{}
		var reach func(s Status) bool
		reach = func(s Status) bool {
			if s.Terminal() {
				return true
			}
			if seen[s] {
				return false
			}
			seen[s] = true
			for _, n := range Successors(s) {
				if reach(n) {
					return true
				}
			}
			return false
		}
		if !reach(from) {
			t.Errorf("no terminal status reachable from %s", from)
		}
	}
}

func TestStatus_repairable_only_for_repair_classes(t *testing.T) {
	for _, s := range []Status{InvalidJSON, Truncated, SchemaInvalid, NoSuchTool} {
		if !s.Repairable() || !Legal(s, Repairing) {
			t.Errorf("%s should be repairable", s)
		}
	}
	for _, s := range []Status{BusinessInvalid, PolicyRejected, TransportIncomplete, Executed} {
		if s.Repairable() || Legal(s, Repairing) {
			t.Errorf("%s must not be repaired", s)
		}
	}
}

func TestUnmarshal_round_trip_and_missing_fields(t *testing.T) {
	e := New("resp_9", 2, t0)
	e.ToolName = "create_invoice"
	e.Request.Roles = []string{"admin"}
	data, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.CallID != "resp_9-2" || got.ToolName != "create_invoice" || got.Request.Roles[0] != "admin" {
		t.Fatalf("round trip lost fields: %+v", got)
	}
	for _, bad := range []string{`{}`, `not json`, `{"call_id":"x"}`} {
		if _, err := Unmarshal([]byte(bad)); err == nil {
			t.Errorf("Unmarshal(%s): want error", bad)
		}
	}
}

func TestSafeResponseID(t *testing.T) {
	if got := SafeResponseID("chatcmpl-AB_c9"); got != "chatcmpl-AB_c9" {
		t.Fatalf("valid id changed: %s", got)
	}
	a, b := SafeResponseID("has.dot"), SafeResponseID("has space")
	if !ValidResponseID(a) || !ValidResponseID(b) || a == b {
		t.Fatalf("derived ids %q %q must be valid and distinct", a, b)
	}
	if SafeResponseID("has.dot") != a {
		t.Fatal("derived id not stable")
	}
}

func TestAbort_keeps_a_repairable_class(t *testing.T) {
	e := New("r", 0, t0)
	e.Status, e.Errors = SchemaInvalid, []string{"currency: must be one of USD, EUR, GBP"}
	e.Abort("repair", "max_deliver", errors.New("model timed out"), t0)
	if e.Status != Failed || e.Failure != SchemaInvalid || len(e.Errors) != 2 {
		t.Fatalf("%s/%s %v: want failed/schema_invalid with both errors", e.Status, e.Failure, e.Errors)
	}
	f := New("r", 1, t0)
	f.Status = Approved
	f.Abort("execute", "panic", errors.New("boom"), t0)
	if f.Failure != "panic" || f.Errors[0] != "boom" {
		t.Fatalf("%s %v: want the code as the failure", f.Failure, f.Errors)
	}
}
