package gates

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/streams"
)

// Parse is the parse gate: strict JSON, cosmetic repair where a tool allows
// it, and text recovery for the calls a model wrote as text.
type Parse struct {
	Tools  Tools
	Limits parse.Limits
	Now    Clock
}

// Handle implements pipeline.Gate.
func (p *Parse) Handle(ctx context.Context, e call.Envelope) ([]call.Envelope, error) {
	if e.Carrier {
		return p.recover(e)
	}
	raw := []byte(e.RawArguments)
	lim := p.Limits
	// A finished no-argument call arrives with empty arguments from several
	// providers; an unfinished one never gets here (accumulate holds it).
	lim.EmptyIsObject = capReached(e) == ""
	canonical, _, perr := parse.Strict(raw, lim)
	repaired := ""
	if perr != nil && perr.Code != parse.CodeTruncated && perr.Code != parse.CodeTooLarge && perr.Code != parse.CodeTooDeep {
		if t, ok := p.Tools.Lookup(e.ToolName); ok && t.Def.Cosmetic != nil {
			if fixed, changes := parse.Repair(raw, *t.Def.Cosmetic); len(changes) > 0 {
				if c2, _, err2 := parse.Strict(fixed, lim); err2 == nil {
					canonical, perr = c2, nil
					repaired = describeChanges(changes)
				}
			}
		}
	}
	if perr == nil {
		if why := capReached(e); why != "" {
			// Output that hit the cap may have lost the end of the intent
			// or a sibling call: complete-looking JSON is truncated too.
			if err := e.Move(streams.Parse, call.Truncated, p.Now(), "parse: "+why+"; the arguments parse, but output that reached the token cap may have lost a sibling call or the end of the intent: not executed"); err != nil {
				return nil, err
			}
			e.Note("output reached the token cap: truncated although the arguments are complete JSON")
			return []call.Envelope{e}, nil
		}
		e.Arguments, e.ArgsCanonical = canonical, true // parse.Strict's output is the canonical form
		if err := e.Move(streams.Parse, call.Parsed, p.Now()); err != nil {
			return nil, err
		}
		if repaired != "" {
			e.Note(repaired)
		}
		return []call.Envelope{e}, nil
	}
	to := call.InvalidJSON
	switch perr.Code {
	case parse.CodeTruncated:
		to = call.Truncated
	case parse.CodeTooLarge, parse.CodeTooDeep:
		to = call.Rejected
	default:
		// Malformed text that the provider said was cut off is truncation.
		if capReached(e) != "" {
			to = call.Truncated
		}
	}
	msg := perr.Error()
	if why := capReached(e); to == call.Truncated && why != "" {
		msg += " (" + why + ")"
	}
	if err := e.Move(streams.Parse, to, p.Now(), msg); err != nil {
		return nil, err
	}
	return []call.Envelope{e}, nil
}

// capReached says why e's response counts as cut off — the provider's own
// length limit, or accumulate's hint (output tokens reached the requested
// Toolgate-Max-Tokens, a call still open at the end) — or "" when it does not.
func capReached(e call.Envelope) string {
	switch {
	case e.TruncatedHint != "":
		return e.TruncatedHint
	case e.FinishReason == "length":
		return "provider finish reason " + e.ProviderFinish + ": output token cap reached"
	}
	return ""
}

func describeChanges(changes []parse.Change) string {
	s := "cosmetic repair:"
	for _, c := range changes {
		s += fmt.Sprintf(" %s at %d (%q -> %q);", c.Kind, c.Offset, c.Before, c.After)
	}
	return s
}
