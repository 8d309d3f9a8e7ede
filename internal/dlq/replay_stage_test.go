package dlq

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/streams"
)

// through moves e through stages, sealing each pass, and ends it in last
// at stage at.
func through(t *testing.T, kr *seal.Keyring, e *call.Envelope, stages []string, at string, last call.Status) {
	t.Helper()
	if err := kr.Seal(seal.Accumulate, e); err != nil {
		t.Fatal(err)
	}
	e.Arguments = json.RawMessage(e.RawArguments)
	for _, st := range stages {
		if err := e.Move(st, seal.Verdict(st), time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := kr.Seal(st, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Move(at, last, time.Now(), "no"); err != nil {
		t.Fatal(err)
	}
}

func TestReplay_enters_where_the_envelope_failed_never_later(t *testing.T) {
	kr := sealtest.Keys(t)
	rejected := call.New("r-pol", 0, time.Now())
	rejected.ToolName, rejected.RawArguments = "delete_customer_account", `{"customer_id":"c"}`
	through(t, kr, &rejected, []string{streams.Parse, streams.Validate, streams.Business}, streams.Policy, call.PolicyRejected)
	unknown := call.New("r-unk", 0, time.Now())
	unknown.ToolName, unknown.RawArguments = "create_invoice", `{"amount":1}`
	through(t, kr, &unknown, seal.Gates(), streams.Execute, call.OutcomeUnknown)
	forged := call.New("r-forged", 0, time.Now())
	forged.ToolName, forged.Arguments = "delete_customer_account", json.RawMessage(`{"customer_id":"c"}`)
	forged.Status = call.OutcomeUnknown
	forged.History = append(forged.History, call.Step{Stage: streams.Execute, Status: call.OutcomeUnknown})
	letter := func(subjectStage string, e call.Envelope) Letter {
		return Letter{Seq: 1, Stage: subjectStage, Failure: string(e.Status), CallID: e.CallID, Envelope: &e}
	}
	for _, c := range []struct {
		name      string
		l         Letter
		toStage   string
		wantStage string
		wantSkip  string // a part of the reason; empty: replayed
	}{
		{"outcome unknown, at execute", letter(streams.Execute, unknown), "", streams.Execute, ""},
		{"outcome unknown, earlier", letter(streams.Execute, unknown), streams.Policy, streams.Policy, ""},
		{"policy rejected, at policy", letter(streams.Policy, rejected), "", streams.Policy, ""},
		{"policy rejected, to execute", letter(streams.Policy, rejected), streams.Execute, streams.Execute, "past policy"},
		{"policy rejected, subject says execute", letter(streams.Execute, rejected), "", streams.Policy, ""},
		{"forged, no seals", letter(streams.Execute, forged), "", streams.Execute, "no accumulate or repair seal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := planReplay([]Letter{c.l}, c.toStage, nil, false)
			if len(plan) != 1 {
				t.Fatalf("plan %v", plan)
			}
			p := plan[0]
			if p.stage != c.wantStage || (c.wantSkip == "") != (p.skip == "") || !strings.Contains(p.skip, c.wantSkip) {
				t.Fatalf("stage %q skip %q, want stage %q skip containing %q", p.stage, p.skip, c.wantStage, c.wantSkip)
			}
		})
	}
	// Seals missing from the middle: a call with parse and validate seals
	// only may enter business, not policy.
	half := call.New("r-half", 0, time.Now())
	half.ToolName, half.RawArguments = "create_invoice", `{"amount":1}`
	through(t, kr, &half, []string{streams.Parse, streams.Validate}, streams.Business, call.BusinessInvalid)
	half.Status, half.History = call.OutcomeUnknown, append(half.History, call.Step{Stage: streams.Execute, Status: call.OutcomeUnknown})
	p := planReplay([]Letter{letter(streams.Execute, half)}, "", nil, false)[0]
	if !strings.Contains(p.skip, "no seal of the business gate") {
		t.Fatalf("a call whose history claims execute but whose seals end at validate: skip %q", p.skip)
	}
}

// TestReplay_entries_are_the_sealed_gates_and_execute: where a replay may
// enter is read off the stage table, and lines up with the gates execute
// demands seals of: the call carrying n gate seals reaches entries()[n].
func TestReplay_entries_are_the_sealed_gates_and_execute(t *testing.T) {
	want := append(seal.Gates(), streams.Execute)
	if got := entries(); !slices.Equal(got, want) {
		t.Fatalf("entries() = %v, want seal.Gates() and execute %v", got, want)
	}
}
