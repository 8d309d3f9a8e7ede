package seal

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
)

// Error is a failed seal check: the stage whose seal is missing, forged or
// made for something else, and why.
type Error struct {
	Stage  string
	Reason string
}

func (e *Error) Error() string { return "seal: " + e.Stage + ": " + e.Reason }

func fail(stage, format string, args ...any) *Error {
	return &Error{Stage: stage, Reason: fmt.Sprintf(format, args...)}
}

// Verify checks that e may run: every seal verifies under its stage's keys
// and chains to the one before it; after the last source seal (accumulate
// or repair, or a carrier's accumulate seal for a call recovered from text)
// come seals of parse, validate, business and policy in that order (a later
// seal of a stage supersedes an earlier one), all for e's call id and tool;
// the raw arguments are those the source and parse sealed, the arguments
// those every gate sealed, the definition revision the one validate,
// business and policy judged, the approval the one policy sealed (and made
// for these arguments), and e is approved. It returns which seals it
// checked ("accumulate k1", ...), or the *Error of the first check that
// failed. A nil or empty keyring passes nothing.
func (kr *Keyring) Verify(e *call.Envelope) ([]string, error) {
	if kr == nil || len(kr.keys) == 0 {
		return nil, fail(Execute, "this execute stage has no seal keys (TOOLGATE_SEAL_KEYS), so it runs nothing")
	}
	if e.Status != call.Approved {
		return nil, fail(Policy, "the call reached execute in status %q, not %s", e.Status, call.Approved)
	}
	if len(e.Seals) == 0 {
		return nil, fail(Accumulate, "the call carries no seal: it did not come through the gates")
	}
	src := -1
	for i, s := range e.Seals {
		if err := kr.verifyOne(e, i); err != nil {
			return nil, err
		}
		if source(s.Stage) {
			src = i
		}
	}
	if src < 0 {
		return nil, fail(Accumulate, "no accumulate or repair seal: the call never entered the pipeline")
	}
	gates := Gates()
	at := make([]int, len(gates)) // where each gate's seal is, in gates' order
	last := src
	for gi, g := range gates {
		at[gi] = -1
		for i := src + 1; i < len(e.Seals); i++ {
			if e.Seals[i].Stage == g {
				at[gi] = i
			}
		}
		switch {
		case at[gi] < 0:
			return nil, fail(g, "no %s seal after the call's last entry (seal %d, %s): the call did not pass the %s gate", g, src, e.Seals[src].Stage, g)
		case at[gi] < last:
			return nil, fail(g, "the %s seal (seal %d) comes before the seal of the gate ahead of it (seal %d): the gates did not pass the call in order", g, at[gi], last)
		}
		last = at[gi]
	}
	s0 := e.Seals[src]
	carrier := s0.Call != e.CallID
	// The bytes as carried: parse sealed the canonical form's hash, so
	// arguments that are not exactly the canonical form it made fail below.
	args, raw := BytesHash(e.Arguments), RawHash(e.RawArguments)
	if !carrier && s0.Tool != e.ToolName {
		return nil, fail(s0.Stage, "the %s seal was made for tool %q, not %q", s0.Stage, s0.Tool, e.ToolName)
	}
	sealOf := func(g string) call.Seal { return e.Seals[at[slices.Index(gates, g)]] }
	for gi, g := range gates {
		s := e.Seals[at[gi]]
		switch {
		case s.Tool != e.ToolName:
			return nil, fail(g, "the %s seal was made for tool %q, not %q", g, s.Tool, e.ToolName)
		case s.Args != args || args == "":
			return nil, fail(g, "the %s seal was made for other arguments than the call carries", g)
		case g != Parse && s.Rev != e.ToolRevision:
			return nil, fail(g, "the %s seal was made for revision %d of %s, the call names revision %d", g, s.Rev, e.ToolName, e.ToolRevision)
		}
	}
	p := sealOf(Parse)
	switch {
	case p.Raw != raw:
		return nil, fail(Parse, "the parse seal was made for other raw arguments than the call carries")
	case !carrier && s0.Raw != p.Raw:
		return nil, fail(Parse, "the parse seal was made for other raw arguments than the %s seal", s0.Stage)
	}
	pol := sealOf(Policy)
	switch {
	case pol.Approval != ApprovalOf(e.Approval):
		return nil, fail(Policy, "the policy seal covers another approval decision than the call carries")
	case e.Approval != nil && e.Approval.Hash != args:
		return nil, fail(Policy, "the approval was given for other arguments than the call carries")
	}
	checked := make([]string, 0, 1+len(gates))
	checked = append(checked, s0.Stage+" "+s0.Key)
	for gi, g := range gates {
		checked = append(checked, g+" "+e.Seals[at[gi]].Key)
	}
	return checked, nil
}

// verifyOne checks seal i of e: a stage that seals, its verdict, a key kr
// holds, the call it was made for, and its MAC over e chained to seal i-1.
func (kr *Keyring) verifyOne(e *call.Envelope, i int) error {
	s := e.Seals[i]
	if Verdict(s.Stage) == "" {
		return fail(Accumulate, "seal %d names stage %q, which seals nothing", i, clip(s.Stage))
	}
	if s.Status != Verdict(s.Stage) {
		return fail(s.Stage, "seal %d says %s passed the call as %q, its verdict is %s", i, s.Stage, clip(string(s.Status)), Verdict(s.Stage))
	}
	k, ok := kr.key(s.Stage, s.Key)
	if !ok {
		return fail(s.Stage, "seal %d was made with key %q, which is not a %s key this execute stage holds", i, clip(s.Key), s.Stage)
	}
	// Only the first seal may be made for another call: the accumulate seal
	// of the carrier a call was recovered from.
	carrier := s.Call != e.CallID
	if carrier && (i != 0 || s.Stage != Accumulate || e.Source != call.SourceTextJSON) {
		return fail(s.Stage, "seal %d was made for call %q, not %q", i, clip(s.Call), e.CallID)
	}
	prev := ""
	if i > 0 {
		prev = e.Seals[i-1].MAC
	}
	if !macMatches(s.MAC, k, s, e, prev, carrier) {
		return fail(s.Stage, "seal %d does not verify: it was forged, or the call was edited after the %s gate passed it", i, s.Stage)
	}
	return nil
}

// clip bounds what an error quotes of a hostile envelope.
func clip(s string) string {
	return strings.ToValidUTF8(redact.Clip(s), "?")
}
