package dlq

import (
	"fmt"
	"slices"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

// entries are the stages a replay may enter, in pipeline order: those of
// the stage table with an entry status. They are seal.Gates and execute
// (TestReplay_entries_are_the_sealed_gates_and_execute), so the n seals a
// call carries let it enter entries()[n] at most.
func entries() []string {
	var out []string
	for _, st := range streams.Table() {
		if st.Entry != "" {
			out = append(out, st.Name)
		}
	}
	return out
}

// replayStage is where a call's replay enters, or why it is not replayed. A
// call re-enters at the stage that failed it, by its own history
// (streams.FailedAt), not by the dead letter's subject, or earlier
// (toStage), never later: every stage before the one it enters must have
// sealed it (seal.Passed; execute verifies the seals themselves).
func replayStage(l Letter, toStage string) (stage, skip string) {
	e := l.Envelope
	failed, _ := streams.FailedAt(*e)
	if call.Status(l.Failure) == call.SealInvalid || e.Status == call.SealInvalid {
		return "", "its seals did not verify at execute (forged, edited, or a gate skipped): it is never replayed; the producer must send the response again"
	}
	stage = failed
	if toStage != "" {
		stage = toStage
	}
	if streams.Entry(stage) == "" {
		return stage, fmt.Sprintf("stage %s takes no replay: use --to-stage parse, validate, business, policy or execute", stage)
	}
	if i, j := slices.Index(entries(), stage), slices.Index(entries(), failed); toStage != "" && j >= 0 && i > j {
		return stage, fmt.Sprintf("--to-stage %s is past %s, the stage that failed the call: a replay enters there or earlier", stage, failed)
	}
	passed := seal.Passed(e)
	if passed == nil {
		return stage, "the call carries no accumulate or repair seal (a letter from before gate seals, or not written by toolgate): it cannot pass execute; the producer must send the response again"
	}
	reach := entries()[len(passed)] // the furthest stage the seals let it enter
	if slices.Index(entries(), stage) > len(passed) {
		if toStage != "" {
			return stage, fmt.Sprintf("--to-stage %s is past the %s gate, which has not passed this call (no %s seal): replay it at %s or earlier", stage, reach, reach, reach)
		}
		return stage, fmt.Sprintf("its history says %s failed it, but it carries no seal of the %s gate (a forged or edited letter): not replayed", stage, reach)
	}
	return stage, ""
}
