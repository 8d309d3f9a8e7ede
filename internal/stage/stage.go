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

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/gates"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/model"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/streams"
	"github.com/toolgate/toolgate/internal/worker"
)

// Deps are what the stages of one process share.
type Deps struct {
	NC       *nats.Conn
	JS       jetstream.JetStream
	Tools    *registry.Registry
	Store    idem.Store // execute only
	Settings streams.Settings
	Limits   parse.Limits
	Owner    string // identifies this process in idempotency claims
	Log      zerolog.Logger
	Now      func() time.Time
	// StreamIdle is how long a streamed response may go without an event
	// before its calls are transport_incomplete (default 60s).
	StreamIdle time.Duration
	// StreamMaxEvents bounds Toolgate-Seq and the events of one streamed
	// response (default gates.DefaultMaxStreamEvents).
	StreamMaxEvents int
	// TolerantProviders always get text recovery (as Toolgate-Tolerant: true).
	TolerantProviders []string
	// Concurrency per stage; execute defaults to 16 since it waits on tools.
	Concurrency map[string]int
	// Observe is told of every handler run (metrics); nil: nothing.
	Observe func(stage string, d time.Duration, err error)
	// Approvals holds calls waiting for a human (policy only); nil: the
	// approvals bucket of JS.
	Approvals *approval.Store
	// ApprovalTTL is how long a call waits for a decision (default 15 min);
	// ApprovalSweep how often the policy stage looks for expired ones
	// (default 5s).
	ApprovalTTL, ApprovalSweep time.Duration
	// Repair is the repair model; nil: the repair gate calls nothing.
	Repair *model.Client
	// Malformed is told of every malformed stored record a stage meets
	// (records.go: log and count it); nil: logged only.
	Malformed MalformedFunc
}

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
		// One accumulate gate serves the events and their timers: they share
		// its cache of stream assemblies and progress.
		var acc *gates.Accumulate
		if st == streams.Accumulate {
			acc = accumulate(d)
		}
		h, err := handler(st, d, acc)
		if err != nil {
			return nil, err
		}
		conc := d.Concurrency[st]
		if conc == 0 && st == streams.Execute {
			conc = 16
		}
		w, err := worker.New(d.JS, worker.Config{
			Stage: st, Stream: streams.StreamOf(st), Concurrency: conc, MaxDeliver: d.Settings.MaxDeliver,
			DeadLetter: pipeline.DeadLetter(st, d.Now), Log: d.Log, Observe: d.Observe,
		}, h)
		if err != nil {
			return nil, err
		}
		s.workers[st] = w
		if st == streams.Accumulate {
			// Streamed responses that stop without a terminal event are
			// settled by the accumulate timer consumer.
			tw, err := worker.New(d.JS, worker.Config{
				Stage: streams.AccumulateTimer, Stream: streams.StreamGates, MaxDeliver: d.Settings.MaxDeliver,
				DeadLetter: pipeline.DeadLetter(streams.Accumulate, d.Now), Log: d.Log,
			}, acc.HandleTimer)
			if err != nil {
				return nil, err
			}
			s.workers[streams.AccumulateTimer] = tw
		}
	}
	return s, nil
}

func accumulate(d Deps) *gates.Accumulate {
	return &gates.Accumulate{Limits: d.Limits, Now: gates.Clock(d.Now), JS: d.JS, IdleTimeout: d.StreamIdle,
		MaxStreamEvents: d.StreamMaxEvents, TolerantProviders: d.TolerantProviders}
}

func handler(st string, d Deps, acc *gates.Accumulate) (worker.Handler, error) {
	now := gates.Clock(d.Now)
	switch st {
	case streams.Accumulate:
		return acc.Handle, nil
	case streams.Parse:
		return pipeline.Handler(st, (&gates.Parse{Tools: d.Tools, Limits: d.Limits, Now: now}).Handle), nil
	case streams.Validate:
		return pipeline.Handler(st, (&gates.Validate{Tools: d.Tools, Now: now}).Handle), nil
	case streams.Business:
		return pipeline.Handler(st, (&gates.Business{Tools: d.Tools, Now: now}).Handle), nil
	case streams.Policy:
		pol := &gates.Policy{Tools: d.Tools, Approvals: d.Approvals, ApprovalTTL: d.ApprovalTTL, Now: now}
		return pipeline.Handler(st, pol.Handle), nil
	case streams.Repair:
		rep := &gates.Repair{Tools: d.Tools, Now: now, Model: d.Repair, Budget: repairBudget(d.Settings)}
		return pipeline.Handler(st, rep.Handle), nil
	case streams.Execute:
		if d.Store == nil {
			return nil, errors.New("stage: execute needs an idempotency store")
		}
		batches, err := d.JS.KeyValue(context.Background(), streams.BucketBatches)
		if err != nil {
			return nil, fmt.Errorf("stage: execute: %w", err)
		}
		x := &gates.Execute{
			Tools: d.Tools, Store: observeStore(d.Store, d.Malformed), Owner: d.Owner, Now: now, LeaseGrace: d.Settings.AckWait,
			Executors: execute.Selector{NC: d.NC}.For,
			Batches:   &gates.BatchKV{KV: batches, Now: now, Malformed: d.Malformed.from(streams.BucketBatches)},
		}
		return pipeline.Handler(st, x.Handle), nil
	}
	return nil, fmt.Errorf("stage: unknown stage %q (stages: accumulate, parse, validate, business, policy, repair, execute)", st)
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
