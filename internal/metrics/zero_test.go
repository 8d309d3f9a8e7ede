package metrics

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

// TestNew_serves_the_alerted_series_at_zero_before_any_event: a series born
// at 1 shows no increase() in Prometheus, so the first dead letter, forged
// envelope or malformed record of its kind never alerted.
func TestNew_serves_the_alerted_series_at_zero_before_any_event(t *testing.T) {
	out := scrape(t, New())
	for _, want := range []string{
		`toolgate_dead_letters_total{failure="truncated",stage="parse"} 0`,
		`toolgate_dead_letters_total{failure="invalid_json",stage="parse"} 0`,
		`toolgate_dead_letters_total{failure="transport_incomplete",stage="accumulate"} 0`,
		`toolgate_dead_letters_total{failure="schema_invalid",stage="validate"} 0`,
		`toolgate_dead_letters_total{failure="no_such_tool",stage="validate"} 0`,
		`toolgate_dead_letters_total{failure="needs_clarification",stage="repair"} 0`,
		`toolgate_dead_letters_total{failure="approval_expired",stage="policy"} 0`,
		`toolgate_dead_letters_total{failure="seal_invalid",stage="execute"} 0`,
		`toolgate_dead_letters_total{failure="outcome_unknown",stage="execute"} 0`,
		`toolgate_dead_letters_total{failure="output_too_large",stage="business"} 0`,
		`toolgate_seal_invalid_total{stage="accumulate"} 0`,
		`toolgate_seal_invalid_total{stage="policy"} 0`,
		`toolgate_seal_invalid_total{stage="execute"} 0`,
		`toolgate_seal_invalid_total{stage="unknown"} 0`,
		`toolgate_malformed_records_total{source="toolgate_tools"} 0`,
		`toolgate_malformed_records_total{source="toolgate_approvals"} 0`,
		`toolgate_malformed_records_total{source="toolgate_idempotency"} 0`,
		`toolgate_malformed_records_total{source="toolgate_batches"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("a fresh process does not serve %s", want)
		}
	}
	// Only pairs a stage can record: accumulate never checks seals.
	if strings.Contains(out, `toolgate_dead_letters_total{failure="seal_invalid",stage="accumulate"}`) {
		t.Error("a pair no stage records is served")
	}
}

// TestDeadLetterLabels_cover_every_failure_a_stage_moves_a_call_to: every
// legal move of a stage's input to a failure (what FailedAt labels) is a
// pair served at zero.
func TestDeadLetterLabels_cover_every_failure_a_stage_moves_a_call_to(t *testing.T) {
	pairs := deadLetterLabels()
	now := time.Unix(0, 0)
	for _, st := range streams.Table() {
		for _, in := range st.Inputs {
			for _, to := range call.Successors(in) {
				if !(to.Repairable() || to.Terminal() && !to.OK() && to != call.Failed) {
					continue
				}
				e := call.New("r", 0, now)
				e.Status = in
				if err := e.Move(st.Name, to, now); err != nil {
					t.Fatal(err)
				}
				if to.Repairable() { // the repair gate gives up on it
					e.Status, e.Failure = call.Failed, to
					e.History = append(e.History, call.Step{Stage: streams.Repair, Status: call.Failed, At: now})
				}
				stage, failure := streams.FailedAt(e)
				if !slices.Contains(pairs, [2]string{stage, failure}) {
					t.Errorf("%s moving %s to %s is dead-lettered as (%s, %s), not served at zero", st.Name, in, to, stage, failure)
				}
			}
		}
	}
	for _, p := range pairs {
		if !streams.IsStage(p[0]) || p[1] == "" {
			t.Errorf("pair %v names no stage or failure", p)
		}
	}
}

func TestSealStages_are_what_NoteStage_can_return(t *testing.T) {
	got := sealStages()
	for _, st := range append(streams.Names(), "", "nosuchstage") {
		if l := seal.NoteStage(seal.Note(st)); !slices.Contains(got, l) {
			t.Errorf("NoteStage(Note(%q)) = %q, not served at zero", st, l)
		}
	}
}
