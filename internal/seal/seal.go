package seal

import (
	"fmt"
	"strconv"

	"github.com/toolgate/toolgate/internal/call"
)

// Seal appends stage's seal to e, which stage has just moved to its pass
// verdict (Passes): made with the stage's first key over what the stage
// judged and chained to e's last seal. It fails when kr holds no key of
// stage or e is not in stage's verdict.
func (kr *Keyring) Seal(stage string, e *call.Envelope) error {
	if !Passes(stage, e.Status) {
		return fmt.Errorf("seal: %s does not seal a call in %s", stage, e.Status)
	}
	if !kr.Has(stage) {
		return fmt.Errorf("seal: this process holds no seal key of the %s stage (TOOLGATE_SEAL_KEYS)", stage)
	}
	k := kr.keys[stage][0]
	var before call.Seal // what the seal before hashed: the same bytes keep its strings
	if n := len(e.Seals); n > 0 {
		before = e.Seals[n-1]
	}
	s := call.Seal{Stage: stage, Status: e.Status, Call: e.CallID, Tool: e.ToolName, Rev: e.ToolRevision, Key: k.ID}
	raw := e.RawArguments
	if e.Carrier {
		raw = e.Text
	}
	// The sources and parse judge the raw arguments and hash them; a gate
	// after parse judges the canonical arguments only and restates the raw
	// hash of the seal it chains to (execute checks the raw against the
	// source's and parse's hashes, and the chain binds the rest), so the
	// raw bytes are hashed twice a call, not at every gate.
	if before.MAC != "" && !source(stage) && stage != Parse {
		s.Raw = before.Raw
	} else {
		s.Raw = sumHex(stringBytes(raw), before.Raw)
	}
	// Parse seals the canonical form's hash (the one a human approves);
	// every gate after it the hash of the bytes it carries, which execute
	// demands equal to parse's: so the arguments are the canonical form
	// parse made and no byte of them changed after it, with one
	// canonicalisation a call. The parse gate's own canonical output
	// (ArgsCanonical) is that form already: its hash is the bytes' hash.
	switch {
	case stage == Parse && !e.ArgsCanonical:
		s.Args = ArgsHash(e.Arguments)
	case len(e.Arguments) > 0:
		s.Args = sumHex(e.Arguments, before.Args)
	}
	if stage == Policy {
		s.Approval = ApprovalOf(e.Approval)
	}
	s.MAC = macText(k, s, e, before.MAC, e.Carrier)
	e.Seals = appendSeal(e.Seals, s)
	return nil
}

// appendSeal is seals with s after them. e may share its seals' array with
// the envelope it came from (a gate's output is a copy of its input, the
// calls recovered from one carrier share its seals), so the slot after them
// is taken only while it is free: never written (zero), as a decoded
// envelope's room for the next seal is. A seal is never zero, so once one
// envelope took it, every other that shares the array gets a fresh one —
// with room for the seals still to come, which the next gate of this
// process takes in turn.
func appendSeal(seals []call.Seal, s call.Seal) []call.Seal {
	n := len(seals)
	if n < cap(seals) && seals[:n+1][n] == (call.Seal{}) {
		return append(seals, s)
	}
	out := make([]call.Seal, n+1, n+1+chainRoom())
	copy(out, seals)
	out[n] = s
	return out
}

// chainRoom is how many seals may follow one: a gate's each.
func chainRoom() int { return len(gates()) }

func quote(s string) string { return strconv.Quote(s) }
