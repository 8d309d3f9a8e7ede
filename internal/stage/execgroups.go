package stage

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// groupSet runs execute's bulkheads (issue 38): one worker per executor
// group on the group's own durable, with the group's concurrency as its
// handler goroutines and its durable's MaxAckPending. A group appears when a
// tool naming it is registered: the set looks at the registry every Every
// and creates (or updates) the group's durable — the execute user may touch
// the consumers of streams.StreamExecute only (internal/authz). A group
// whose tools are gone keeps its worker: calls may still wait for it.
type groupSet struct {
	js       jetstream.JetStream
	reg      *registry.Registry
	settings streams.Settings
	base     worker.Config // Stage execute; Stream, Durable and Concurrency set per group
	h        worker.Handler
	log      zerolog.Logger
	every    time.Duration
	circuit  Circuit
	// transition is told of each state a group's breaker enters
	// (metrics); nil: nothing.
	transition func(group, state string)

	mu      sync.Mutex
	running map[string]*groupRun
}

type groupRun struct {
	conc   int
	br     *breaker
	w      *worker.Worker
	cancel context.CancelFunc
	done   chan struct{}
}

// want is every registered group and its concurrency: the largest any of
// its tools asks for.
func (g *groupSet) want() map[string]int {
	out := map[string]int{}
	for _, name := range g.reg.Names() {
		t, ok := g.reg.Lookup(name)
		if !ok {
			continue
		}
		grp := t.Def.Group()
		if !streams.ValidGroup(grp) {
			continue
		}
		out[grp] = max(out[grp], t.Def.Concurrency())
	}
	return out
}

// Run keeps a worker per group until ctx is done, then waits for them all
// to drain.
func (g *groupSet) Run(ctx context.Context) {
	every := g.every
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		g.sync(ctx)
		select {
		case <-ctx.Done():
			g.mu.Lock()
			runs := g.running
			g.mu.Unlock()
			for _, r := range runs {
				<-r.done
			}
			return
		case <-t.C:
		}
	}
}

// sync starts the worker of each new group, and restarts the one whose
// concurrency changed after updating its durable.
func (g *groupSet) sync(ctx context.Context) {
	for grp, conc := range g.want() {
		g.mu.Lock()
		r := g.running[grp]
		g.mu.Unlock()
		if r != nil && r.conc == conc {
			continue
		}
		if err := g.ensure(ctx, grp, conc); err != nil {
			g.log.Error().Err(err).Str("group", grp).Msg("execute: executor group's durable; retrying")
			continue
		}
		if r != nil {
			r.cancel()
			<-r.done
		}
		if err := g.start(ctx, grp, conc); err != nil {
			g.log.Error().Err(err).Str("group", grp).Msg("execute: executor group's worker")
		}
	}
}

// ensure creates or updates grp's durable.
func (g *groupSet) ensure(ctx context.Context, grp string, conc int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, c := range g.settings.ExecuteGroupConsumers(grp, conc) { // its own durable first, then its lanes'
		if _, err := g.js.CreateOrUpdateConsumer(ctx, streams.StreamExecute, g.settings.Config(c)); err != nil {
			return err
		}
	}
	return nil
}

func (g *groupSet) start(ctx context.Context, grp string, conc int) error {
	wc := g.base
	wc.Stream, wc.Durable, wc.Concurrency, wc.Batch = streams.StreamExecute, streams.ExecuteDurable(grp), conc, conc
	wc.Schedule = func(id string) string { return streams.ExecuteSchedule(grp, id) }
	for _, l := range g.settings.ExecuteGroupLanes(grp) { // its fairness lanes
		wc.Shares = append(wc.Shares, worker.Share{Durables: l.Durables, Weight: l.Weight, Floor: l.Floor})
	}
	if len(wc.Shares) > 0 {
		wc.Window = worker.FairWindow
	}
	cs := g.settings.ExecuteGroupConsumers(grp, conc)
	br := newBreaker(g.js, g.settings.Config(cs[0]), g.circuit, g.log)
	for _, c := range cs[1:] { // the breaker pauses the group's lanes with its durable
		br.lanes = append(br.lanes, g.settings.Config(c))
	}
	if g.transition != nil {
		br.onState = func(state string) { g.transition(grp, state) }
	}
	observe := wc.Observe
	wc.Observe = func(stage string, d time.Duration, err error) {
		br.observe(err)
		if observe != nil {
			observe(stage, d, err)
		}
	}
	w, err := worker.New(g.js, wc, g.h)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	r := &groupRun{conc: conc, br: br, w: w, cancel: cancel, done: make(chan struct{})}
	g.mu.Lock()
	if g.running == nil {
		g.running = map[string]*groupRun{}
	}
	g.running[grp] = r
	g.mu.Unlock()
	go func() {
		defer close(r.done)
		if err := w.Run(wctx); err != nil {
			g.log.Error().Err(err).Str("group", grp).Msg("execute: executor group's worker stopped")
		}
	}()
	return nil
}
