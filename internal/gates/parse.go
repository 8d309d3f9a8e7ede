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
	lim.EmptyIsObject = e.FinishReason != "length" && e.TruncatedHint == ""
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
		e.Arguments = canonical
		if err := e.Move(streams.Parse, call.Parsed, p.Now()); err != nil {
			return nil, err
		}
		if repaired != "" {
			e.Note(repaired)
		}
		switch {
		case e.FinishReason == "length":
			e.Note("provider reported a length limit; arguments are complete JSON, so the call goes on")
		case e.TruncatedHint != "":
			e.Note("warning: " + e.TruncatedHint + "; arguments are complete JSON, so the call goes on")
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
		if e.TruncatedHint != "" {
			to = call.Truncated
		}
	}
	msg := perr.Error()
	if to == call.Truncated && e.TruncatedHint != "" {
		msg += " (" + e.TruncatedHint + ")"
	}
	if err := e.Move(streams.Parse, to, p.Now(), msg); err != nil {
		return nil, err
	}
	return []call.Envelope{e}, nil
}

func describeChanges(changes []parse.Change) string {
	s := "cosmetic repair:"
	for _, c := range changes {
		s += fmt.Sprintf(" %s at %d (%q -> %q);", c.Kind, c.Offset, c.Before, c.After)
	}
	return s
}
