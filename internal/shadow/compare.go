package shadow

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/whatif"
)

// Comparer evaluates live calls also against the shadow revision, when one
// is applied, and counts the differences (Tally). With none applied,
// Observe is one atomic load: no store, no message.
type Comparer struct {
	cur     atomic.Pointer[armed]
	running atomic.Bool // Run is flushing
	Tally   *Tally
	reports jetstream.KeyValue
	log     zerolog.Logger
	now     func() time.Time
}

// armed is the applied shadow, compiled.
type armed struct {
	rev  Revision
	defs map[string]tool.Definition
	mu   sync.Mutex // whatif.Evaluator: one goroutine at a time
	ev   *whatif.Evaluator
}

// Watch starts watching the shadow bucket and returns once its current
// value is loaded; it stops with ctx. A revision that does not decode or
// compile arms nothing (logged): the live calls go on as ever. Run writes
// the counts to reports.
func Watch(ctx context.Context, shadows, reports jetstream.KeyValue, log zerolog.Logger, now func() time.Time) (*Comparer, error) {
	if now == nil {
		now = time.Now
	}
	c := &Comparer{Tally: &Tally{}, reports: reports, log: log, now: now}
	w, err := shadows.Watch(ctx, Key)
	if err != nil {
		return nil, fmt.Errorf("shadow: watch: %w", err)
	}
	if err := registry.Follow(ctx, w, c.set); err != nil {
		return nil, err
	}
	return c, nil
}

// set arms the revision in e, or disarms on a delete or a bad revision.
func (c *Comparer) set(e jetstream.KeyValueEntry) {
	if e.Operation() != jetstream.KeyValuePut {
		c.arm(nil)
		return
	}
	r, err := Decode(e.Value())
	if err == nil {
		var a *armed
		if a, err = compile(r); err == nil {
			c.arm(a)
			c.log.Info().Str("shadow", r.ID).Strs("tools", r.Names()).Msg("shadow revision armed: every call is also compared with it")
			return
		}
	}
	c.arm(nil)
	c.log.Error().Err(err).Msg("shadow revision unusable: nothing is compared")
}

func (c *Comparer) arm(a *armed) {
	c.cur.Store(a)
	id := ""
	if a != nil {
		id = a.rev.ID
	}
	c.Tally.reset(id)
}

// compile makes r's evaluator; a panic of the compiler is an error.
func compile(r Revision) (a *armed, err error) {
	defer func() {
		if p := recover(); p != nil {
			a, err = nil, fmt.Errorf("shadow: compiling it panicked: %v", p)
		}
	}()
	ev, err := whatif.New(r.Tools)
	if err != nil {
		return nil, err
	}
	a = &armed{rev: r, ev: ev, defs: map[string]tool.Definition{}}
	for _, d := range r.Tools {
		a.defs[d.Name] = d
	}
	return a, nil
}

// Gate is a gate's handler (pipeline.Gate's Handle).
type Gate = func(context.Context, call.Envelope) ([]call.Envelope, error)

// Wrap is the validate, business or policy gate g, each call it stops (or,
// at policy, decides) also compared with the shadow. The live outputs and
// error are g's, untouched.
func (c *Comparer) Wrap(g Gate) Gate {
	return func(ctx context.Context, in call.Envelope) ([]call.Envelope, error) {
		outs, err := g(ctx, in)
		if err == nil {
			c.Observe(ctx, in, outs)
		}
		return outs, err
	}
}

// Observe compares the live verdict on in (the gate's outs) with the
// shadow's: in again through the shadow's validate, business and policy
// gates, from the arguments parse made. A call is compared once, at the
// gate where the live definitions stop it — validate or business refusing
// it — or at policy, which decides every call that gets there; a call the
// live gate passes on (validated, business-valid) is left to the next. So
// a shadow that would let through what the live schema or rules refuse is
// counted too ("rejected → would pass"). Not compared: a resumed approval,
// a call back from repair (its first refusal was compared), a tool the
// shadow does not name. It publishes and stores nothing (the Tally does,
// in batches) and never fails the live call. With no shadow applied it is
// one atomic load.
func (c *Comparer) Observe(ctx context.Context, in call.Envelope, outs []call.Envelope) {
	a := c.cur.Load()
	if a == nil || len(outs) != 1 || !decided(in, outs[0]) {
		return
	}
	d, ok := a.defs[in.ToolName]
	if !ok { // not in the shadow: it keeps its live definition
		return
	}
	defer func() {
		if p := recover(); p != nil {
			c.log.Error().Interface("panic", p).Str("call_id", in.CallID).Msg("shadow comparison panicked; the live call goes on")
		}
	}()
	e := in
	e.History = slices.Clone(in.History)
	e.Errors, e.Review, e.Seals, e.Result = nil, nil, nil, nil
	e.Reset("shadow", call.Parsed, c.now(), "compared with the shadow revision")
	a.mu.Lock()
	got := a.ev.Evaluate(ctx, e)
	a.mu.Unlock()
	if len(got) != 1 {
		return
	}
	was, would := whatif.FateOf(outs[0]), whatif.FateOf(got[0])
	c.Tally.add(a.rev.ID, in.ToolName, in.CallID, was, was.Was(outs[0].Status), would, why(d, would, got[0].Errors))
}

// decided reports whether the live gate's verdict on in (out) is the
// call's, to compare: validate or business stopped it, or policy decided
// it now. A call back from repair was compared at its first refusal.
func decided(in, out call.Envelope) bool {
	switch in.Status {
	case call.Parsed:
		if out.Status == call.Validated {
			return false
		}
	case call.Validated:
		if out.Status == call.BusinessValid {
			return false
		}
	case call.BusinessValid:
	default:
		return false
	}
	return !slices.ContainsFunc(in.History, func(s call.Step) bool { return s.Status == call.SchemaInvalid })
}

// Active is the armed shadow's id; "" when none.
func (c *Comparer) Active() string {
	if a := c.cur.Load(); a != nil {
		return a.rev.ID
	}
	return ""
}
