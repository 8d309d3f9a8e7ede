package stage

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/execgroup"
	"github.com/toolgate/toolgate/internal/gates"
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

	// partSync is how often the partition streams are looked for
	// (Deps.PartitionSync).
	partSync time.Duration

	mu      sync.Mutex
	running map[string]*groupRun
	parts   []int     // execute's partition streams (p >= 1) that exist, last look
	partsAt time.Time // when they were looked for
}

type groupRun struct {
	want
	br     *breaker
	w      *worker.Worker
	cancel context.CancelFunc
	done   chan struct{}
}

// want is what a group's tools ask of it: the largest concurrency any
// asks for, fail fast when all ask for it, and the retry schedule of the
// first (by name) that sets one (executor.retry).
type want struct {
	conc     int
	failFast bool
	attempts int    // 0: the deployment's MaxDeliver
	backoff  string // the delays, comma separated; "": the worker's default
}

// delays is w.backoff parsed.
func (w want) delays() []time.Duration {
	var out []time.Duration
	for _, s := range strings.Split(w.backoff, ",") {
		if d, err := time.ParseDuration(s); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// consumers are group's durable, then its lanes' (settings.Fair), as w asks.
func (w want) consumers(settings streams.Settings, group string) []streams.Consumer {
	cs := settings.ExecuteGroupConsumers(group, w.conc)
	for i := range cs {
		cs[i].MaxDeliver = w.attempts
	}
	return cs
}

// partConsumers are consumers in partition p's stream.
func (w want) partConsumers(settings streams.Settings, group string, p int) []streams.Consumer {
	cs := settings.ExecuteGroupPartitionConsumers(group, w.conc, p)
	for i := range cs {
		cs[i].MaxDeliver = w.attempts
	}
	return cs
}

// wants is every registered group's want.
func (g *groupSet) wants() map[string]want {
	out := map[string]want{}
	for _, name := range g.reg.Names() {
		t, ok := g.reg.Lookup(name)
		if !ok {
			continue
		}
		grp := t.Def.Group()
		if !streams.ValidGroup(grp) {
			continue
		}
		w, seen := out[grp]
		nw := want{conc: max(w.conc, t.Def.Concurrency()), failFast: (w.failFast || !seen) && t.Def.FailsFast(), attempts: w.attempts, backoff: w.backoff}
		if nw.attempts == 0 {
			nw.attempts = t.Def.RetryAttempts()
		}
		if b := t.Def.RetryBackoff(); nw.backoff == "" && len(b) > 0 {
			parts := make([]string, len(b))
			for i, d := range b {
				parts[i] = d.String()
			}
			nw.backoff = strings.Join(parts, ",")
		}
		out[grp] = nw
	}
	return out
}

// failFast wraps h for a group whose calls fail at once while its circuit
// is open: such a call's first attempt ends execution_failed with the
// error circuit_open (gates.WithCircuitOpen), a dead letter to replay, and
// nothing is sent. Only a first attempt: a call tried before may have a
// claim or an outcome to reconcile, which the gate does as always.
func failFast(grp string, br *breaker, h worker.Handler) worker.Handler {
	why := execgroup.ErrCircuitOpen + ": executor group " + grp + "'s circuit is open (its executor failed repeatedly); the call was not sent — replay it once the group is back"
	return func(ctx context.Context, m worker.Msg) ([]worker.Output, error) {
		if m.NumDelivered <= 1 && m.Header.Get(worker.HeaderAttempt) == "" && !br.admit() {
			ctx = gates.WithCircuitOpen(ctx, why)
		}
		return h(ctx, m)
	}
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

// sync starts the worker of each new group, restarts the one whose
// concurrency changed after updating its durable, and starts again the one
// whose worker stopped: a worker that cannot look up its durable (a
// stream leader lost in a cluster: "context deadline exceeded") returns,
// and the group's calls waited for good.
func (g *groupSet) sync(ctx context.Context) {
	parts, moved := g.lookParts(ctx)
	for grp, wt := range g.wants() {
		g.mu.Lock()
		r := g.running[grp]
		g.mu.Unlock()
		if r != nil && r.want == wt && !r.stopped() && !moved {
			continue
		}
		if err := g.ensure(ctx, grp, wt, parts); err != nil {
			g.log.Error().Err(err).Str("group", grp).Msg("execute: executor group's durable; retrying")
			continue
		}
		if r != nil && r.want == wt && !r.stopped() {
			continue // new partitions only: its worker finds them (Parts)
		}
		if r != nil {
			r.cancel()
			<-r.done
		}
		if err := g.start(ctx, grp, wt); err != nil {
			g.log.Error().Err(err).Str("group", grp).Msg("execute: executor group's worker")
		}
	}
	if moved {
		g.mu.Lock()
		g.parts = parts
		g.mu.Unlock()
	}
}

// lookParts looks for execute's partition streams when partSync has
// passed since the last look: what it found, and whether that differs.
func (g *groupSet) lookParts(ctx context.Context) ([]int, bool) {
	g.mu.Lock()
	parts, due := g.parts, time.Since(g.partsAt) >= g.partSync || g.partsAt.IsZero()
	if due {
		g.partsAt = time.Now()
	}
	g.mu.Unlock()
	if !due {
		return parts, false
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	now, err := streams.PartitionStreamsOf(lctx, g.js, streams.Execute)
	if err != nil {
		g.log.Warn().Err(err).Msg("execute: partition streams; looking again later")
		return parts, false
	}
	return now, !slices.Equal(now, parts)
}

// partStreams are the partition streams the groups' durables were applied
// in at the last look: the groups' workers read them (worker.Config.Parts).
func (g *groupSet) partStreams(context.Context) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, p := range g.parts {
		out = append(out, streams.PartitionStream(streams.Execute, p))
	}
	return out, nil
}

// stopped reports whether r's worker has returned.
func (r *groupRun) stopped() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// ensure creates or updates grp's durables, in partition 0 and in parts.
func (g *groupSet) ensure(ctx context.Context, grp string, wt want, parts []int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, p := range append([]int{0}, parts...) {
		for _, c := range wt.partConsumers(g.settings, grp, p) { // its own durable first, then its lanes'
			if _, err := g.js.CreateOrUpdateConsumer(ctx, c.Stream, g.settings.Config(c)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *groupSet) start(ctx context.Context, grp string, wt want) error {
	conc := wt.conc
	wc := g.base
	wc.Stream, wc.Durable, wc.Concurrency, wc.Batch = streams.StreamExecute, streams.ExecuteDurable(grp), conc, conc
	// A retry waits in the partition of its call (a schedule targets a
	// subject of its own stream).
	wc.Schedule = func(subject, id string) string { return streams.ScheduleFor(grp, subject, id) }
	wc.Parts, wc.Resync = g.partStreams, max(g.every, 500*time.Millisecond) // what sync applied: a cheap look
	for _, l := range g.settings.ExecuteGroupLanes(grp) {                   // its fairness lanes
		wc.Shares = append(wc.Shares, worker.Share{Durables: l.Durables, Weight: l.Weight, Floor: l.Floor})
	}
	if len(wc.Shares) > 0 {
		wc.Window = worker.FairWindow
	}
	if d := wt.delays(); len(d) > 0 { // the group's own schedule, the last step repeating
		wc.Backoff = func(n uint64) time.Duration { return d[min(int(max(n, 1)), len(d))-1] }
	}
	cs := wt.consumers(g.settings, grp)
	br := newBreaker(g.js, g.settings.Config(cs[0]), g.circuit, g.log)
	for _, c := range cs[1:] { // the breaker pauses the group's lanes with its durable
		br.lanes = append(br.lanes, g.settings.Config(c))
	}
	br.parts = func() []streamConfig { // and its partitions' durables
		g.mu.Lock()
		parts := g.parts
		g.mu.Unlock()
		var out []streamConfig
		for _, p := range parts {
			for _, c := range wt.partConsumers(g.settings, grp, p) {
				out = append(out, streamConfig{c.Stream, g.settings.Config(c)})
			}
		}
		return out
	}
	br.failFast = wt.failFast
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
	h := g.h
	if wt.failFast {
		h = failFast(grp, br, h)
	}
	w, err := worker.New(g.js, wc, h)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	r := &groupRun{want: wt, br: br, w: w, cancel: cancel, done: make(chan struct{})}
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
