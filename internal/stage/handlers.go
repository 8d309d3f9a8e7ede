package stage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/batch"
	"github.com/toolgate/toolgate/internal/gates"
	"github.com/toolgate/toolgate/internal/ingest"
	"github.com/toolgate/toolgate/internal/tracing"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// accumulate builds the one accumulate gate of a process: the events and
// their timers share its caches.
func accumulate(d Deps) *ingest.Accumulate {
	return &ingest.Accumulate{Limits: d.Limits, Now: d.Now, JS: d.JS, IdleTimeout: d.StreamIdle,
		MaxStreamEvents: d.StreamMaxEvents, TolerantProviders: d.TolerantProviders, Emit: d.Emit, Identity: d.Identity,
		AssertUsers: d.AssertUsers}
}

func handler(st string, d Deps, acc *ingest.Accumulate) (worker.Handler, error) {
	now := gates.Clock(d.Now)
	switch st {
	case streams.Accumulate:
		return acc.Handle, nil
	case streams.Parse:
		return d.Emit.Handler(st, (&gates.Parse{Tools: d.Tools, Limits: d.Limits, Now: now}).Handle), nil
	case streams.Validate:
		return d.Emit.Handler(st, (&gates.Validate{Tools: d.Tools, Now: now}).Handle), nil
	case streams.Business:
		return d.Emit.Handler(st, (&gates.Business{Tools: d.Tools, Now: now}).Handle), nil
	case streams.Policy:
		pol := &gates.Policy{Tools: d.Tools, Approvals: d.Approvals, ApprovalTTL: d.ApprovalTTL, Now: now}
		return d.Emit.Handler(st, pol.Handle), nil
	case streams.Repair:
		rep := &gates.Repair{Tools: d.Tools, Now: now, Model: d.Repair, Budget: repairBudget(d.Settings)}
		return d.Emit.Handler(st, rep.Handle), nil
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
			Executors: tracing.Executors(d.Trace, d.Exec.selector(d.NC).For),
			Batches:   &batch.KV{KV: batches, Now: now, Malformed: d.Malformed.from(streams.BucketBatches)},
			Seals:     sealsOf(d.Emit), LimitEvent: d.LimitEvent,
		}
		return d.Emit.Handler(st, x.Handle), nil
	}
	return nil, fmt.Errorf("stage: unknown stage %q (stages: %s)", st, strings.Join(streams.Names(), ", "))
}
