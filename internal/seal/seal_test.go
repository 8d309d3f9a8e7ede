package seal_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/streams"
)

func approvedCall() call.Envelope {
	e := call.New("resp-1", 0, time.Unix(1700000000, 0))
	e.Provider, e.ToolName = "openai-chat", "create_invoice"
	e.RawArguments = `{ "customer_id": "cus_1", "amount": 5 }`
	e.Arguments = json.RawMessage(`{"amount":5,"customer_id":"cus_1"}`)
	e.ToolRevision = 3
	e.Request = call.Request{Tenant: "acme", Principal: "alice", Roles: []string{"billing"}, Identity: call.IdentityUnverified}
	e.Batch = call.Batch{ID: "resp-1", Index: 0, Size: 1}
	return e
}

func sealedCall(t testing.TB, kr *seal.Keyring) call.Envelope {
	e := approvedCall()
	sealtest.Through(t, kr, &e)
	return e
}

func TestSeal_stage_names_are_the_streams_names(t *testing.T) {
	for _, st := range append(seal.Sealing(), seal.Execute) {
		if !streams.IsStage(st) {
			t.Errorf("seal stage %q is not a stage of streams", st)
		}
	}
}

func TestSeal_args_hash_is_the_approval_hash(t *testing.T) {
	for _, args := range []string{`{"b":1,"a":[1,2]}`, `{ "a" : "x" }`, `not json`} {
		if got, want := seal.ArgsHash(json.RawMessage(args)), approval.ArgsHash(json.RawMessage(args)); got != want {
			t.Errorf("%s: seal %s, approval %s", args, got, want)
		}
	}
}

func TestSeal_a_call_sealed_by_every_gate_verifies(t *testing.T) {
	kr := sealtest.Keys(t)
	e := sealedCall(t, kr)
	checked, err := kr.Verify(&e)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(checked, ", "); !strings.HasPrefix(got, "accumulate k") || !strings.Contains(got, ", policy k") {
		t.Fatalf("checked %q", got)
	}
}

func TestSeal_what_does_not_verify(t *testing.T) {
	kr := sealtest.Keys(t)
	for _, c := range []struct {
		name  string
		stage string // the stage the error names
		edit  func(e *call.Envelope)
	}{
		{"arguments edited", seal.Parse, func(e *call.Envelope) { e.Arguments = json.RawMessage(`{"amount":500,"customer_id":"cus_1"}`) }},
		{"raw arguments edited", seal.Parse, func(e *call.Envelope) { e.RawArguments = `{"amount":500}` }},
		{"tool swapped", seal.Accumulate, func(e *call.Envelope) { e.ToolName = "delete_customer_account" }},
		{"call id changed", seal.Accumulate, func(e *call.Envelope) { e.CallID = "resp-1-1" }},
		{"response id changed", seal.Accumulate, func(e *call.Envelope) { e.ResponseID = "resp-2" }},
		{"roles raised", seal.Accumulate, func(e *call.Envelope) { e.Request.Roles = []string{"admin"} }},
		{"tenant changed", seal.Accumulate, func(e *call.Envelope) { e.Request.Tenant = "victim" }},
		{"identity claimed verified", seal.Accumulate, func(e *call.Envelope) { e.Request.Identity = call.IdentityVerified }},
		{"dry run dropped", seal.Accumulate, func(e *call.Envelope) { e.Request.DryRun = true }},
		{"batch resized", seal.Accumulate, func(e *call.Envelope) { e.Batch.Size = 2 }},
		{"revision changed", seal.Validate, func(e *call.Envelope) { e.ToolRevision = 4 }},
		{"policy seal dropped", seal.Policy, func(e *call.Envelope) { e.Seals = e.Seals[:4] }},
		{"business seal dropped (the chain breaks at policy)", seal.Policy, func(e *call.Envelope) { e.Seals = append(e.Seals[:3:3], e.Seals[4]) }},
		{"no seals", seal.Accumulate, func(e *call.Envelope) { e.Seals = nil }},
		{"not approved", seal.Policy, func(e *call.Envelope) { e.Status = call.OutcomeUnknown }},
		{"approval added", seal.Policy, func(e *call.Envelope) {
			e.Approval = &call.Decision{By: "mallory", Hash: seal.ArgsHash(e.Arguments)}
		}},
		{"MAC changed", seal.Validate, func(e *call.Envelope) { e.Seals[2].MAC = e.Seals[1].MAC }},
		{"seal field changed", seal.Business, func(e *call.Envelope) { e.Seals[3].Rev = 9 }},
		{"unknown key", seal.Policy, func(e *call.Envelope) { e.Seals[4].Key = "k-forged" }},
		{"seals reordered", seal.Business, func(e *call.Envelope) { e.Seals[2], e.Seals[3] = e.Seals[3], e.Seals[2] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := sealedCall(t, kr)
			c.edit(&e)
			_, err := kr.Verify(&e)
			var se *seal.Error
			if !errors.As(err, &se) {
				t.Fatalf("verified (%v)", err)
			}
			if se.Stage != c.stage {
				t.Errorf("error names %s, want %s: %v", se.Stage, c.stage, err)
			}
		})
	}
}

func TestSeal_a_stage_key_forges_only_its_own_seal(t *testing.T) {
	kr := sealtest.Keys(t)
	parseOnly := kr.Only([]string{seal.Parse})
	if parseOnly.Has(seal.Policy) || !parseOnly.Has(seal.Parse) {
		t.Fatalf("a parse process holds %v", parseOnly.Stages())
	}
	// A stolen parse key re-seals parse after editing the arguments: the
	// later gates' seals still name the old arguments.
	e := sealedCall(t, kr)
	e.Arguments = json.RawMessage(`{"amount":500,"customer_id":"cus_1"}`)
	e.Status = call.Parsed
	if err := parseOnly.Seal(seal.Parse, &e); err != nil {
		t.Fatal(err)
	}
	e.Status = call.Approved
	if _, err := kr.Verify(&e); err == nil {
		t.Fatal("a parse seal made after policy's verified")
	}
	if err := parseOnly.Seal(seal.Policy, &call.Envelope{Status: call.Approved}); err == nil {
		t.Fatal("a parse process sealed as policy")
	}
}

func TestSeal_a_later_pass_of_a_stage_supersedes_the_earlier(t *testing.T) {
	kr := sealtest.Keys(t)
	e := sealedCall(t, kr)
	// A replay re-entered validate: validate, business and policy seal again.
	for _, st := range []string{seal.Validate, seal.Business, seal.Policy} {
		e.Status = seal.Verdict(st)
		if err := kr.Seal(st, &e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kr.Verify(&e); err != nil {
		t.Fatal(err)
	}
	// Parse again without the later gates: the call must pass them again.
	e.Status = call.Parsed
	if err := kr.Seal(seal.Parse, &e); err != nil {
		t.Fatal(err)
	}
	e.Status = call.Approved
	if _, err := kr.Verify(&e); err == nil {
		t.Fatal("a call parsed again after policy verified without passing the later gates again")
	}
}

func TestSeal_an_approved_decision_is_bound(t *testing.T) {
	kr := sealtest.Keys(t)
	e := approvedCall()
	e.Approval = &call.Decision{By: "alice", Hash: seal.ArgsHash(e.Arguments), At: time.Now()}
	sealtest.Through(t, kr, &e)
	if _, err := kr.Verify(&e); err != nil {
		t.Fatal(err)
	}
	e.Approval = &call.Decision{By: "bob", Hash: e.Approval.Hash}
	if _, err := kr.Verify(&e); err == nil {
		t.Fatal("another approver verified")
	}
}

func TestSeal_a_call_recovered_from_text_verifies_through_its_carrier(t *testing.T) {
	kr := sealtest.Keys(t)
	carrier := call.New("resp-t", 0, time.Now())
	carrier.CallID, carrier.Carrier, carrier.Text, carrier.Source = "resp-t-text", true, `I will call get_weather {"city":"Paris"}`, call.SourceTextJSON
	if err := kr.Seal(seal.Accumulate, &carrier); err != nil {
		t.Fatal(err)
	}
	child := call.New("resp-t", 0, time.Now())
	child.Source, child.ToolName, child.RawArguments = call.SourceTextJSON, "get_weather", `{"city":"Paris"}`
	child.Batch = call.Batch{ID: "resp-t", Index: 0, Size: 1}
	child.Seals = carrier.Seals
	child.Arguments = json.RawMessage(child.RawArguments)
	for _, st := range seal.Gates() {
		child.Status = seal.Verdict(st)
		if err := kr.Seal(st, &child); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kr.Verify(&child); err != nil {
		t.Fatal(err)
	}
	// A native call may not borrow another call's seal.
	child.Source = call.SourceNative
	if _, err := kr.Verify(&child); err == nil {
		t.Fatal("a native call verified with a carrier's seal")
	}
}

func TestSeal_no_keys_runs_nothing(t *testing.T) {
	e := sealedCall(t, sealtest.Keys(t))
	var none *seal.Keyring
	if _, err := none.Verify(&e); err == nil || !strings.Contains(err.Error(), "no seal keys") {
		t.Fatalf("nil keyring: %v", err)
	}
	if _, err := sealtest.Keys(t).Verify(&e); err == nil {
		t.Fatal("verified under other keys")
	}
}

func TestSeal_rotation_first_key_seals_every_key_verifies(t *testing.T) {
	dir := t.TempDir()
	old, err := seal.Ensure(dir, seal.Sealing())
	if err != nil {
		t.Fatal(err)
	}
	e := sealedCall(t, old)
	// Rotate policy: a new first line; the old key still verifies.
	path := filepath.Join(dir, seal.FileName(seal.Policy))
	b, _ := os.ReadFile(path)
	line, _ := seal.NewKeyLine()
	if err := os.WriteFile(path, append(line, b...), 0o600); err != nil {
		t.Fatal(err)
	}
	rotated, err := seal.Load(dir, []string{seal.Execute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rotated.Verify(&e); err != nil {
		t.Fatalf("a call sealed before the rotation: %v", err)
	}
	f := sealedCall(t, rotated)
	if kid := f.Seals[4].Key; !strings.HasPrefix(string(line), kid+" ") {
		t.Fatalf("policy sealed with %s, want the new first key", kid)
	}
	// Ensure keeps existing files across restarts.
	again, err := seal.Ensure(dir, seal.Sealing())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Verify(&f); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
}

func TestSeal_key_files_that_are_refused(t *testing.T) {
	for name, content := range map[string]string{
		"empty":      "",
		"short key":  "k1 abcd\n",
		"no id":      strings.Repeat("ab", 32) + "\n",
		"duplicates": "k1 " + strings.Repeat("ab", 32) + "\nk1 " + strings.Repeat("cd", 32) + "\n",
		"bad id":     "k/1 " + strings.Repeat("ab", 32) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, seal.FileName(seal.Parse)), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := seal.Load(dir, []string{seal.Parse}); err == nil {
				t.Fatal("loaded")
			}
		})
	}
	// The error says where and what: the line (counted from 1, comments and
	// blank lines included) and the key's size.
	for content, want := range map[string]string{
		"# seal keys\n\nk1 abcd\n":       "line 3: key k1: want 64 hex digits",
		"# seal keys\nk1\n":              `line 2: want "<key id> <64 hex digits>"`,
		"k1 " + strings.Repeat("zz", 32): "line 1: key k1: want 64 hex digits",
	} {
		if _, err := seal.ParseKeys([]byte(content)); err == nil || err.Error() != want {
			t.Errorf("ParseKeys(%q): %v, want %q", content, err, want)
		}
	}
	if _, err := seal.Load(t.TempDir(), []string{seal.Parse}); err == nil || !strings.Contains(err.Error(), "TOOLGATE_SEAL_KEYS") {
		t.Fatalf("missing file: %v", err)
	}
}

// The verdict table, written out from the state machine's side: for each
// stage that seals, the status a call stands in when it reaches the stage,
// and the one move out of it the stage seals. Every other move out of it (a
// failure, a wait, an abort) is never sealed, nor is any other status. The
// statuses are literals, not seal's own table, so a change to what a stage
// seals fails here.
func TestSeal_failures_and_waits_are_never_sealed(t *testing.T) {
	table := []struct {
		stage   string
		from    call.Status // the status a call reaches the stage in
		verdict call.Status // the one move the stage seals
	}{
		{"accumulate", "", "received"},
		{"repair", "repairing", "received"},
		{"parse", "received", "parsed"},
		{"validate", "parsed", "validated"},
		{"business", "validated", "business_valid"},
		{"policy", "business_valid", "approved"},
		{"policy", "approval_required", "approved"},
	}
	for _, c := range table {
		if c.from != "" && !call.Legal(c.from, c.verdict) {
			t.Errorf("%s: %s -> %s is not a move of the state machine", c.stage, c.from, c.verdict)
		}
		if got := seal.Verdict(c.stage); got != c.verdict {
			t.Errorf("Verdict(%s) = %q, want %q", c.stage, got, c.verdict)
		}
		if c.from != "" {
			for _, to := range call.Successors(c.from) {
				if got, want := seal.Passes(c.stage, to), to == c.verdict; got != want {
					t.Errorf("%s moving a call %s -> %s: Passes = %v, want %v", c.stage, c.from, to, got, want)
				}
			}
		}
		for _, s := range call.Statuses() {
			if got, want := seal.Passes(c.stage, s), s == c.verdict; got != want {
				t.Errorf("Passes(%s, %s) = %v, want %v", c.stage, s, got, want)
			}
		}
	}
	// Stages that seal nothing, and names that are no stage.
	for _, st := range []string{"execute", "ingest", "results", ""} {
		if v := seal.Verdict(st); v != "" {
			t.Errorf("Verdict(%q) = %q, want none", st, v)
		}
		for _, s := range call.Statuses() {
			if seal.Passes(st, s) {
				t.Errorf("Passes(%q, %s): %q seals nothing", st, s, st)
			}
		}
	}
	// The failures and waits each gate can reach, by name: none sealed, and
	// Seal refuses each.
	kr := sealtest.Keys(t)
	for _, c := range []struct {
		stage  string
		status call.Status
	}{
		{"parse", "invalid_json"}, {"parse", "truncated"}, {"parse", "discarded"},
		{"validate", "schema_invalid"}, {"validate", "no_such_tool"}, {"validate", "batch_aborted"},
		{"business", "business_invalid"},
		{"policy", "approval_required"}, {"policy", "policy_rejected"}, {"policy", "dry_run"},
		{"repair", "failed"}, {"repair", "needs_clarification"},
		{"execute", "executed"}, {"execute", "approved"},
	} {
		if seal.Passes(c.stage, c.status) {
			t.Errorf("%s seals a call it moved to %s", c.stage, c.status)
		}
		e := approvedCall()
		e.Status = c.status
		if err := kr.Seal(c.stage, &e); err == nil {
			t.Errorf("Seal(%s) sealed a call in %s", c.stage, c.status)
		}
	}
}

// Hostile lengths: every field a seal covers may be long (a call id, a
// tool name, a tenant from a header); sealing and verifying such a call
// works, and a seal made for it verifies only for it.
func TestSeal_long_fields_seal_and_verify(t *testing.T) {
	kr := sealtest.Keys(t)
	long := strings.Repeat("x", 4096)
	for name, edit := range map[string]func(e *call.Envelope){
		"call id":      func(e *call.Envelope) { e.CallID = long },
		"tool":         func(e *call.Envelope) { e.ToolName = long },
		"approver":     func(e *call.Envelope) { e.Approval = &call.Decision{By: long, Hash: seal.ArgsHash(e.Arguments)} },
		"response id":  func(e *call.Envelope) { e.ResponseID = long },
		"tenant":       func(e *call.Envelope) { e.Request.Tenant = long },
		"principal":    func(e *call.Envelope) { e.Request.Principal = long },
		"conversation": func(e *call.Envelope) { e.Request.Conversation = long },
		"identity":     func(e *call.Envelope) { e.Request.Identity = long },
		"batch id":     func(e *call.Envelope) { e.Batch.ID = long },
		"role":         func(e *call.Envelope) { e.Request.Roles = []string{long} },
	} {
		t.Run(name, func(t *testing.T) {
			e := approvedCall()
			edit(&e)
			sealtest.Through(t, kr, &e)
			if _, err := kr.Verify(&e); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A gate skipped with every seal that is there genuine: the chain of MACs
// holds, so only the order of the gates catches it, and the error says
// which gate is missing.
func TestSeal_a_skipped_gate_does_not_verify(t *testing.T) {
	kr := sealtest.Keys(t)
	for _, c := range []struct {
		name   string
		stages []string
		stage  string // the gate the error names
		reason string
	}{
		{"parse skipped", []string{"accumulate", "validate", "business", "policy"}, "parse", "no parse seal"},
		{"business skipped", []string{"accumulate", "parse", "validate", "policy"}, "business", "no business seal"},
		{"no source", []string{"parse", "validate", "business", "policy"}, "accumulate", "no accumulate or repair seal"},
		{"policy not passed again after a repair", []string{"accumulate", "parse", "validate", "business", "policy", "repair", "parse", "validate", "business"}, "policy", "no policy seal after the call's last entry (seal 5, repair)"},
		{"parse not passed again after a repair", []string{"accumulate", "parse", "repair", "validate", "business", "policy"}, "parse", "no parse seal after the call's last entry (seal 2, repair)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := approvedCall()
			for _, st := range c.stages {
				e.Status = seal.Verdict(st)
				if err := kr.Seal(st, &e); err != nil {
					t.Fatal(err)
				}
			}
			e.Status = call.Approved
			_, err := kr.Verify(&e)
			var se *seal.Error
			if !errors.As(err, &se) || se.Stage != c.stage || !strings.HasPrefix(se.Reason, c.reason) {
				t.Fatalf("Verify: %v, want the %s gate named: %s", err, c.stage, c.reason)
			}
		})
	}
}

func TestSeal_notes_name_the_stage_and_nothing_else(t *testing.T) {
	for _, st := range append(seal.Sealing(), seal.Execute) {
		if got := seal.NoteStage(seal.Note(st)); got != st {
			t.Errorf("NoteStage(Note(%s)) = %q", st, got)
		}
	}
	if got := seal.Note("policy"); got != "seal of policy" {
		t.Errorf("Note(policy) = %q", got)
	}
	for _, note := range []string{"", "policy", "seal of ", "seal of nothing", "seal of results", "Seal of policy", " seal of policy"} {
		if got := seal.NoteStage(note); got != "unknown" {
			t.Errorf("NoteStage(%q) = %q, want unknown", note, got)
		}
	}
}
