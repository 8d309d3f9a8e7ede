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
	s.Raw = sumHex(stringBytes(raw), before.Raw)
	// Parse seals the canonical form's hash (the one a human approves);
	// every gate after it the hash of the bytes it carries, which execute
	// demands equal to parse's: so the arguments are the canonical form
	// parse made and no byte of them changed after it, with one
	// canonicalisation a call.
	switch {
	case stage == Parse:
		s.Args = ArgsHash(e.Arguments)
	case len(e.Arguments) > 0:
		s.Args = sumHex(e.Arguments, before.Args)
	}
	if stage == Policy {
		s.Approval = ApprovalOf(e.Approval)
	}
	s.MAC = macText(k, s, e, before.MAC, e.Carrier)
	// A fresh array: e may share its seals with the envelope it came from.
	e.Seals = append(e.Seals[:len(e.Seals):len(e.Seals)], s)
	return nil
}

func quote(s string) string { return strconv.Quote(s) }
