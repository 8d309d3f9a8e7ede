// Package stage wires a gate to the shared worker: the code behind each
// services/<stage>/main.go and behind `toolgate up`, which runs them all in
// one process.
package stage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/ingest"
	"github.com/toolgate/toolgate/internal/streams"
	"github.com/toolgate/toolgate/internal/worker"
)

// Set runs a set of stage workers in one process.
type Set struct {
	workers    map[string]*worker.Worker
	background []func(context.Context) // e.g. the approval sweeper, stopped with ctx
}

// New builds the workers of stages.
func New(stages []string, d Deps) (*Set, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Malformed == nil {
		d.Malformed = logMalformed(d.Log)
	}
	s := &Set{workers: map[string]*worker.Worker{}}
	for _, st := range stages {
		if st == streams.Policy && d.Approvals == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			kv, err := d.JS.KeyValue(ctx, streams.BucketApprovals)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("stage: approvals bucket: %w", err)
			}
			d.Approvals = approval.NewStore(kv)
		}
		if st == streams.Policy {
			if d.Approvals.OnMalformed == nil {
				d.Approvals.OnMalformed = d.Malformed.from(streams.BucketApprovals)
			}
			calls, err := d.JS.KeyValue(context.Background(), streams.BucketCalls)
			if err != nil {
				return nil, fmt.Errorf("stage: calls bucket: %w", err)
			}
			sw := &approval.Sweeper{Store: d.Approvals, JS: d.JS, Every: d.ApprovalSweep, Now: d.Now, Log: d.Log, Calls: calls}
			s.background = append(s.background, sw.Run)
		}
		sd, err := withConsumer(context.Background(), d, st)
		if err != nil {
			return nil, err
		}
		// One accumulate gate serves the events and their timers: they share
		// its cache of stream assemblies and progress.
		var acc *ingest.Accumulate
		if st == streams.Accumulate {
			acc = accumulate(sd)
		}
		h, err := handler(st, sd, acc)
		if err != nil {
			return nil, err
		}
		conc := d.Concurrency[st]
		if conc == 0 && st == streams.Execute {
			conc = 16
		}
		w, err := worker.New(d.JS, worker.Config{
			Stage: st, Stream: streams.StreamOf(st), Concurrency: conc,
			DeadLetter: d.Emit.DeadLetter(st, d.Now), Log: d.Log, Observe: d.Observe,
		}, h)
		if err != nil {
			return nil, err
		}
		s.workers[st] = w
		if st == streams.Accumulate {
			// Streamed responses that stop without a terminal event are
			// settled by the accumulate timer consumer.
			tw, err := worker.New(d.JS, worker.Config{
				Stage: streams.AccumulateTimer, Stream: streams.StreamGates,
				DeadLetter: d.Emit.DeadLetter(streams.Accumulate, d.Now), Log: d.Log,
			}, acc.HandleTimer)
			if err != nil {
				return nil, err
			}
			s.workers[streams.AccumulateTimer] = tw
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
