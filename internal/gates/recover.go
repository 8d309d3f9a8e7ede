package gates

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/canon"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/textcall"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

// recover turns a carrier (the assistant's own text of a response that had
// no native call, sent only when the producer asked for tolerance) into the
// calls written in it. A recovered call must name a registered tool and pass
// its schema, or it is recorded as discarded — never dropped silently, never
// executed.
func (p *Parse) recover(carrier call.Envelope) ([]call.Envelope, error) {
	// The registry stands for the request's tools: a text that is only
	// bare calls of registered tools is read (textcall.Options).
	found, discarded := textcall.RecoverWith(carrier.Text, textcall.Options{Known: func(name string) bool {
		_, ok := p.Tools.Lookup(name)
		return ok
	}})
	if len(found)+len(discarded) == 0 {
		if err := carrier.Move(streams.Parse, call.NoToolCalls, p.Now()); err != nil {
			return nil, err
		}
		carrier.Note("no tool call found in the assistant's text")
		return []call.Envelope{carrier}, nil
	}
	if perr := p.Limits.CheckCalls(len(found) + len(discarded)); perr != nil {
		if err := carrier.Move(streams.Parse, call.Rejected, p.Now(), perr.Error()); err != nil {
			return nil, err
		}
		return []call.Envelope{carrier}, nil
	}
	var out []call.Envelope
	size := len(found) + len(discarded)
	for i, f := range found {
		t, known := p.Tools.Lookup(f.Name)
		args, typing, typeErr := typed(f, t, known)
		e := p.child(carrier, i, size, f.Name, string(args))
		e.Note(fmt.Sprintf("recovered from text (%s format, bytes %d-%d)", f.Format, f.Start, f.End))
		to, errs := call.Parsed, []string(nil)
		if !known {
			to, errs = call.Discarded, []string{fmt.Sprintf("recovered call names %q, which is not a registered tool", f.Name)}
		} else if typeErr != nil {
			to, errs = call.Discarded, []string{"recovered parameters cannot be encoded: " + typeErr.Error()}
		} else {
			var doc any
			if err := json.Unmarshal(args, &doc); err != nil {
				to, errs = call.Discarded, []string{"recovered arguments do not decode: " + err.Error()}
			} else if probs := t.Schema.Validate(doc); len(probs) > 0 {
				to = call.Discarded
				for _, pr := range probs {
					errs = append(errs, "recovered call fails the schema: "+pr.String())
				}
			}
		}
		if why := capReached(carrier); why != "" {
			// The text reached the token cap: the call may be a fragment
			// of the intent, however complete it looks.
			to, errs = call.Truncated, append([]string{"parse: " + why + "; a call recovered from output that reached the token cap is not executed"}, errs...)
		}
		if to == call.Parsed {
			e.Arguments = args
		}
		if err := e.Move(streams.Parse, to, p.Now(), errs...); err != nil {
			return nil, err
		}
		if typing != "" {
			e.Note(typing)
		}
		out = append(out, e)
	}
	for j, d := range discarded {
		e := p.child(carrier, len(found)+j, size, "", d.Excerpt)
		if err := e.Move(streams.Parse, call.Discarded, p.Now(),
			fmt.Sprintf("%s text at bytes %d-%d is not a usable call: %s", d.Format, d.Start, d.End, d.Reason)); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// typed is the arguments of f: for a dialect whose values are untyped text
// (f.Params), each converted by the declared type of its property in t's
// schema (Call.TypedArgs; a parameter it gives no type keeps its text),
// with the conversions as a history note;
// otherwise the arguments as recovered.
func typed(f textcall.Call, t *tool.Compiled, known bool) (json.RawMessage, string, error) {
	if f.Params == nil || !known {
		return f.Arguments, "", nil
	}
	types := declaredTypes(t.Def.InputSchema)
	if types == nil {
		types = func(string) []string { return nil } // a schema without properties declares no type
	}
	args, convs, err := f.TypedArgs(types)
	if err != nil {
		return f.Arguments, "", err
	}
	if args, err = overlay(f.Arguments, args); err != nil {
		return f.Arguments, "", err
	}
	if len(convs) == 0 {
		return args, "", nil
	}
	notes := make([]string, len(convs))
	for i, c := range convs {
		notes[i] = c.String()
	}
	return args, "parameters typed by the schema: " + strings.Join(notes, "; "), nil
}

// overlay is base with every member of typed put over it, so that an
// argument a dialect did not keep in Params is never lost.
func overlay(base, typed json.RawMessage) (json.RawMessage, error) {
	_, b, perr := parse.Strict(base, parse.DefaultLimits())
	if perr != nil {
		return nil, perr
	}
	_, t, perr := parse.Strict(typed, parse.DefaultLimits())
	if perr != nil {
		return nil, perr
	}
	missing := false
	for k := range b {
		if _, ok := t[k]; !ok {
			missing = true
		}
	}
	if !missing {
		return typed, nil // Params held every argument
	}
	for k, v := range t {
		b[k] = v
	}
	return canon.Value(b)
}

func (p *Parse) child(carrier call.Envelope, i, size int, name, raw string) call.Envelope {
	e := call.New(carrier.ResponseID, i, p.Now())
	// The calls are named like the carrier's response (call.Key, its batch
	// id: the response id qualified by its tenant), so two tenants' text
	// under one response id never share a call id.
	key := carrier.Batch.ID
	if key == "" {
		key = carrier.ResponseID
	}
	e.CallID = call.ID(key, i)
	e.Provider, e.Model, e.Request = carrier.Provider, carrier.Model, carrier.Request
	e.FinishReason, e.ProviderFinish = carrier.FinishReason, carrier.ProviderFinish
	e.TruncatedHint = carrier.TruncatedHint
	e.Source = call.SourceTextJSON
	e.ToolName, e.RawArguments = name, raw
	e.Batch = call.Batch{ID: key, Index: i, Size: size, Atomic: carrier.Batch.Atomic}
	e.Replays = carrier.Replays
	// The carrier's accumulate seal: the child's parse seal chains to it,
	// so execute can tell the call came from this response's own text.
	e.Seals = carrier.Seals
	return e
}
