package seal

import (
	"encoding/base64"
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
	s := call.Seal{
		Stage: stage, Status: e.Status, Call: e.CallID, Tool: e.ToolName, Raw: RawHash(e.RawArguments),
		Args: ArgsHash(e.Arguments), Rev: e.ToolRevision, Key: k.ID,
	}
	if e.Carrier {
		s.Raw = RawHash(e.Text)
	}
	if stage == Policy {
		s.Approval = ApprovalOf(e.Approval)
	}
	s.MAC = base64.RawURLEncoding.EncodeToString(mac(k, s, e, lastMAC(e.Seals), e.Carrier))
	// A fresh array: e may share its seals with the envelope it came from.
	e.Seals = append(e.Seals[:len(e.Seals):len(e.Seals)], s)
	return nil
}

func lastMAC(seals []call.Seal) string {
	if n := len(seals); n > 0 {
		return seals[n-1].MAC
	}
	return ""
}

func quote(s string) string { return strconv.Quote(s) }
