package seal

import (
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/call"
)

// The stages that seal (streams' names; seal does not import NATS code, so
// which stages seal, and with which verdict, is generated from the stage
// table: stages_gen.go).
const (
	Accumulate = "accumulate"
	Repair     = "repair"
	Parse      = "parse"
	Validate   = "validate"
	Business   = "business"
	Policy     = "policy"
	Execute    = "execute"
)

// Sealing lists the stages that seal, sources first, then the gates in
// the order a call must pass them. Both come from the stage table
// (stages_gen.go, written by make generate).
func Sealing() []string { return append(sources(), gates()...) }

// Gates lists the gates whose seals must follow a call's last source seal,
// in order: every gate of the stage table between the sources and execute
// (stages_gen.go), so a gate added to the table is demanded by execute.
func Gates() []string { return gates() }

// Verdict is the status a stage's seal says it passed a call with; "" for a
// stage that seals nothing.
func Verdict(stage string) call.Status { return verdict(stage) }

// Passes reports whether stage moving a call to status is a pass that
// stage seals. Failures and waits (approval_required) are never sealed.
func Passes(stage string, status call.Status) bool {
	v := Verdict(stage)
	return v != "" && v == status
}

func source(stage string) bool { return slices.Contains(sources(), stage) }

// notePrefix starts the history note of a seal_invalid step.
const notePrefix = "seal of "

// Note is the history note of the seal_invalid step of a call whose seal of
// stage failed the check.
func Note(stage string) string { return notePrefix + stage }

// NoteStage reads the stage back from a seal_invalid step's note: one of
// Sealing or Execute, else "unknown", so a label made of it stays bounded.
func NoteStage(note string) string {
	st, ok := strings.CutPrefix(note, notePrefix)
	if ok && (Verdict(st) != "" || st == Execute) {
		return st
	}
	return "unknown"
}
