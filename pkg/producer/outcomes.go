package producer

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Outcomes is what became of one response so far: its calls' results, each
// call once, in call order, or the response's own result when it yielded no
// call (no_tool_calls, rejected, a conflict).
type Outcomes struct {
	ResponseID string
	Calls      []wire.Result
	Response   *wire.ResponseResult
	// Expected is how many calls the response proposed, as its results say
	// (wire.Result.ResponseCalls); 0 until a result says it.
	Expected int
	// Waiting is the calls without an outcome that toolgate said wait (for
	// a human approval, until its expiry), as AwaitAll returned them; a
	// Tally leaves it to the caller (Watch.Waiting).
	Waiting []wire.Waiting
}

// Complete reports whether every outcome of the response is in: its
// response-level result, or as many distinct calls as it proposed.
func (o *Outcomes) Complete() bool {
	return o.Response != nil || o.Expected > 0 && len(o.Calls) >= o.Expected
}

// OK reports whether the response is complete and every outcome a success
// (executed, dry_run, no_tool_calls).
func (o *Outcomes) OK() bool {
	if !o.Complete() {
		return false
	}
	if o.Response != nil {
		return o.Response.OK
	}
	for _, c := range o.Calls {
		if !c.OK {
			return false
		}
	}
	return true
}

// Messages is the tool-result items of the calls (see Messages).
func (o *Outcomes) Messages() []json.RawMessage { return Messages(o.Calls) }

// add takes one outcome of this response; a call seen before (a stage
// redelivered and published it again) is kept once, its first copy.
func (o *Outcomes) add(out Outcome) {
	if out.Response != nil {
		if o.Response == nil {
			o.Response = out.Response
		}
		return
	}
	c := out.Call
	o.Expected = max(o.Expected, c.ResponseCalls)
	for _, have := range o.Calls {
		if have.CallID == c.CallID {
			return
		}
	}
	o.Calls = sorted(append(o.Calls, *c))
}

// Tally sorts the outcomes of several responses by response id: feed it
// every Outcome a Watch returns.
type Tally struct {
	byID  map[string]*Outcomes
	order []string
}

// NewTally tallies the outcomes of responseIDs; outcomes of other responses
// are counted under their own id when they come.
func NewTally(responseIDs ...string) *Tally {
	t := &Tally{byID: map[string]*Outcomes{}}
	for _, rid := range responseIDs {
		t.of(rid)
	}
	return t
}

func (t *Tally) of(rid string) *Outcomes {
	o, ok := t.byID[rid]
	if !ok {
		o = &Outcomes{ResponseID: rid}
		t.byID[rid] = o
		t.order = append(t.order, rid)
	}
	return o
}

// Add counts one outcome and returns its response's outcomes so far.
func (t *Tally) Add(out Outcome) *Outcomes {
	rid := ""
	switch {
	case out.Call != nil:
		rid = out.Call.ResponseID
	case out.Response != nil:
		rid = out.Response.ResponseID
	}
	o := t.of(rid)
	o.add(out)
	return o
}

// Responses lists every response's outcomes, in the order they were named
// or first seen.
func (t *Tally) Responses() []*Outcomes {
	out := make([]*Outcomes, len(t.order))
	for i, rid := range t.order {
		out[i] = t.byID[rid]
	}
	return out
}

// Complete reports whether every response tallied is complete.
func (t *Tally) Complete() bool {
	for _, o := range t.byID {
		if !o.Complete() {
			return false
		}
	}
	return true
}

// AwaitAll reads outcomes until every watched response is complete, without
// knowing beforehand how many calls each proposed: the first result of a
// call says how many its response had (wire.Result.ResponseCalls). It returns
// the outcomes of each response, in the order they were watched; on ctx's end
// it returns what it has with ctx's error (a call waiting for a human
// approval, a stream still open), on an unreadable result that error. A
// response not complete says which of its calls wait (Outcomes.Waiting).
func (w *Watch) AwaitAll(ctx context.Context) ([]*Outcomes, error) {
	t := NewTally(w.responseIDs()...)
	for !t.Complete() {
		o, err := w.Next(ctx)
		if err != nil {
			return w.withWaiting(t.Responses()), err
		}
		t.Add(o)
	}
	return t.Responses(), nil
}

// withWaiting sets the Waiting of each response not complete.
func (w *Watch) withWaiting(rs []*Outcomes) []*Outcomes {
	for _, o := range rs {
		if !o.Complete() {
			o.Waiting = w.Waiting(o.ResponseID)
		}
	}
	return rs
}

// AwaitResponse is AwaitAll for a Watch of one response: its outcomes.
func (w *Watch) AwaitResponse(ctx context.Context) (*Outcomes, error) {
	rs, err := w.AwaitAll(ctx)
	if len(rs) != 1 {
		return nil, fmt.Errorf("producer: AwaitResponse on a Watch of %d responses; use AwaitAll", len(rs))
	}
	return rs[0], err
}
