// Package whatif answers "what would these tool definitions have done to
// the calls we really had": it re-runs recorded calls through the parse,
// validate, business and policy gates of new definitions in this process
// (the pure gates of internal/gates, as the stages run them), never
// publishing, never calling an executor or the repair model, and compares
// each verdict with the call's recorded fate (Report). The calls the gates
// would run are then charged, in time order, against the new definitions'
// limits held in memory (limits.go, limit.Meter), never the real counters.
// read.go streams the recorded calls from NATS.
package whatif

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/gates"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

// Evaluator runs envelopes through the gates of one set of definitions. It
// is safe for use by one goroutine at a time.
type Evaluator struct {
	tools toolSet
	chain []func(context.Context, call.Envelope) ([]call.Envelope, error)
}

// New compiles defs (revision 1, 2, ... in order) into an Evaluator.
func New(defs []tool.Definition) (*Evaluator, error) {
	tools := toolSet{}
	for i, d := range defs {
		c, err := tool.Compile(d, uint64(i+1))
		if err != nil {
			return nil, fmt.Errorf("whatif: %w", err)
		}
		tools[d.Name] = c
	}
	now := time.Now
	ev := &Evaluator{tools: tools}
	ev.chain = []func(context.Context, call.Envelope) ([]call.Envelope, error){
		(&gates.Parse{Tools: tools, Limits: parse.DefaultLimits(), Now: now}).Handle,
		(&gates.Validate{Tools: tools, Now: now}).Handle,
		(&gates.Business{Tools: tools, Now: now}).Handle,
		(&gates.Policy{Tools: tools, Approvals: noApprovals{}, Now: now}).Handle,
	}
	return ev, nil
}

// Registered reports whether the definitions name tool.
func (ev *Evaluator) Registered(name string) bool { _, ok := ev.tools[name]; return ok }

// Evaluate runs e (a Received envelope, as accumulate made it) through the
// gates and returns the envelopes it ended as: one, or those a carrier's
// text recovery found. A gate's own error (an illegal transition, an
// undecodable canonical form) ends that envelope as Failed with the error,
// as the worker would dead-letter it.
func (ev *Evaluator) Evaluate(ctx context.Context, e call.Envelope) []call.Envelope {
	todo := []call.Envelope{e}
	var done []call.Envelope
	for len(todo) > 0 {
		cur := todo[0]
		todo = todo[1:]
		g := gateFor(cur)
		if g < 0 {
			done = append(done, cur)
			continue
		}
		outs, err := ev.chain[g](ctx, cur)
		if err != nil {
			cur.Abort(stageName(g), "gate_error", err, time.Now())
			done = append(done, cur)
			continue
		}
		todo = append(todo, outs...)
	}
	return done
}

// stageName is the stage of the chain's gate g.
func stageName(g int) string {
	switch g {
	case 0:
		return streams.Parse
	case 1:
		return streams.Validate
	case 2:
		return streams.Business
	}
	return streams.Policy
}

// gateFor is the index in the chain of the gate e goes to next; -1 when
// the gates are done with it.
func gateFor(e call.Envelope) int {
	switch e.Status {
	case call.Received:
		return 0
	case call.Parsed:
		return 1
	case call.Validated:
		return 2
	case call.BusinessValid:
		return 3
	}
	return -1
}

// noApprovals is an approvals store that holds nothing and keeps nothing:
// a call that needs approval waits in it without a trace.
type noApprovals struct{}

func (noApprovals) Get(context.Context, string) (approval.Record, uint64, error) {
	return approval.Record{}, 0, approval.ErrNotFound
}
func (noApprovals) Create(context.Context, approval.Record) (uint64, error) { return 1, nil }
func (noApprovals) Update(_ context.Context, _ approval.Record, rev uint64) (uint64, error) {
	return rev + 1, nil
}

// toolSet is the compiled tools as gates.Tools.
type toolSet map[string]*tool.Compiled

func (s toolSet) Lookup(name string) (*tool.Compiled, bool) { c, ok := s[name]; return c, ok }

func (s toolSet) Names() []string {
	n := make([]string, 0, len(s))
	for k := range s {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
