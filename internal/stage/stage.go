// Package stage wires a gate to the shared worker: the code behind each
// services/<stage>/main.go and behind `toolgate up`, which runs them all in
// one process.
package stage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/tracing"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// Set runs a set of stage workers in one process.
type Set struct {
	workers    map[string]*worker.Worker
	background []func(context.Context) // e.g. the approval sweeper, stopped with ctx
}

// New builds the workers of stages: for each, the binding of its row in
// streams.Table (table.go), a worker on its main consumer and one on each of
// its Extra consumers.
func New(stages []string, d Deps) (*Set, error) {
	return newSet(stages, bindings(), d)
}

// newSet is New with the stages' code given.
func newSet(stages []string, binds map[string]Binding, d Deps) (*Set, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Malformed == nil {
		d.Malformed = logMalformed(d.Log)
	}
	s := &Set{workers: map[string]*worker.Worker{}}
	for _, st := range stages {
		row, ok := streams.Lookup(st)
		b, bound := binds[st]
		if !ok || !bound {
			return nil, fmt.Errorf("stage: unknown stage %q (stages: %s)", st, strings.Join(streams.Names(), ", "))
		}
		sd, err := withConsumer(context.Background(), d, st)
		if err != nil {
			return nil, err
		}
		built, err := b.build(sd)
		if err != nil {
			return nil, err
		}
		s.background = append(s.background, built.Background...)
		conc := d.Concurrency[st]
		if conc == 0 {
			conc = b.concurrency
		}
		wc := worker.Config{
			Stage: st, Stream: row.Stream, Concurrency: conc, Key: b.key,
			DeadLetter: tracing.DeadLetter(d.Trace, st, d.Emit.DeadLetter(st, d.Now)), Log: d.Log, Observe: d.Observe, Gap: d.Gap,
		}
		for _, g := range d.Settings.LaneGroups(row) { // its fairness lanes
			wc.Shares = append(wc.Shares, worker.Share{Stream: g.Stream, Durables: g.Durables, Streams: g.Streams, Weight: g.Weight, Floor: g.Floor})
		}
		if len(wc.Shares) > 1 { // its outputs wait in a stream's ingest in front of every tenant's
			wc.Window = worker.FairWindow
		}
		if row.Laned { // its partitions beyond 0, whichever exist (streams.PartitionStreamsOf)
			wc.Parts, wc.Resync = partitionsOf(d.JS, st), partitionSync(d)
		}
		if st == streams.Accumulate { // its claimed durables' partitions and TOOLGATE_IN's, whichever exist (streams.ResponsesPartitionsOf, InPartitionsOf)
			wc.Parts, wc.Resync, wc.PartOf = ingestPartitionsOf(d.JS), partitionSync(d), streams.IngestPartOf
		}
		if st == streams.Accumulate && len(wc.Shares) > 1 { // its lanes read listed tenants' inputs that its main durable reads too
			owner, err := accumulateOwner(d)
			if err != nil {
				return nil, err
			}
			wc.Skip = owner.Skip
		}
		if st == streams.Execute { // it waits on executors: its status records say so
			wt := newWaits(st, d)
			wc.Retrying, wc.Redelivered = tracing.Retrying(wt.retrying), wt.redelivered
			wc.RetryingOnWait = true // a call a limit holds: its record names the limit
		}
		h := tracing.Handler(d.Trace, st, built.Handler, built.Untraced)
		w, err := worker.New(d.JS, wc, h)
		if err != nil {
			return nil, err
		}
		s.workers[st] = w
		if st == streams.Execute && d.Tools != nil { // its executor groups' bulkheads (execgroups.go)
			gs := &groupSet{partSync: partitionSync(d), js: d.JS, reg: d.Tools, settings: sd.Settings, base: wc, h: h, log: d.Log, every: d.GroupSync, circuit: d.Circuit, transition: d.CircuitTransition}
			s.background = append(s.background, gs.Run)
		}
		for _, c := range row.Extra {
			h, ok := built.Extra[c.Name]
			if !ok {
				return nil, fmt.Errorf("stage: %s: no handler for its consumer %s", st, c.Name)
			}
			xw, err := worker.New(d.JS, worker.Config{
				Stage: c.Name, Stream: c.Stream, DeadLetter: tracing.DeadLetter(d.Trace, c.Name, d.Emit.DeadLetter(st, d.Now)), Log: d.Log,
			}, h)
			if err != nil {
				return nil, err
			}
			s.workers[c.Name] = xw
		}
	}
	return s, nil
}

// Ready reports nil when every worker is consuming.
func (s *Set) Ready() error {
	for name, w := range s.workers {
		if !w.Ready() {
			return fmt.Errorf("stage %s is not consuming", name)
		}
	}
	return nil
}

// Run runs every worker until ctx is done, then waits for all to drain.
func (s *Set) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(s.workers))
	for _, f := range s.background {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ctx)
		}()
	}
	for _, w := range s.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Run(ctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// partitionSync is how often workers look for partition streams.
func partitionSync(d Deps) time.Duration {
	if d.PartitionSync > 0 {
		return d.PartitionSync
	}
	return 10 * time.Second
}

// ingestPartitionsOf lists TOOLGATE_RESPONSES' and TOOLGATE_IN's
// partition streams beyond partition 0 that exist: accumulate reads them
// all, whatever its P.
func ingestPartitionsOf(js jetstream.JetStream) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return streams.IngestPartitionNames(ctx, js)
	}
}

// partitionsOf lists stage's partition streams beyond partition 0 that
// exist: its worker reads them all, whatever this process's P.
func partitionsOf(js jetstream.JetStream, stage string) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return streams.PartitionStreamNames(ctx, js, stage)
	}
}
