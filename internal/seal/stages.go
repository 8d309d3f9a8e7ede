package seal

import (
	"strings"

	"github.com/toolgate/toolgate/internal/call"
)

// The stages that seal (streams' names; seal does not import NATS code).
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
// the order a call must pass them.
func Sealing() []string { return []string{Accumulate, Repair, Parse, Validate, Business, Policy} }

// Gates lists the gates whose seals must follow a call's last source seal,
// in order.
func Gates() []string { return []string{Parse, Validate, Business, Policy} }

// Verdict is the status a stage's seal says it passed a call with; "" for a
// stage that seals nothing.
func Verdict(stage string) call.Status {
	switch stage {
	case Accumulate, Repair:
		return call.Received
	case Parse:
		return call.Parsed
	case Validate:
		return call.Validated
	case Business:
		return call.BusinessValid
	case Policy:
		return call.Approved
	}
	return ""
}

// Passes reports whether stage moving a call to status is a pass that
// stage seals. Failures and waits (approval_required) are never sealed.
func Passes(stage string, status call.Status) bool {
	v := Verdict(stage)
	return v != "" && v == status
}

func source(stage string) bool { return stage == Accumulate || stage == Repair }

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
