package stage

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/internal/batch"
	"github.com/toolgate/toolgate/internal/gates"
	"github.com/toolgate/toolgate/internal/ingest"
	"github.com/toolgate/toolgate/internal/tracing"
	"github.com/toolgate/toolgate/streams"
)

// BindAccumulate binds the accumulate stage. Each whole response waits for
// its response-id claim, a round trip to the server that takes milliseconds
// under load: responses are handled concurrently, the inputs of one (a
// stream's events) in order. At 8 goroutines accumulate still held the
// pipeline back (bench: 2,113 calls/s; 64: 2,455, with every other stage's
// backlog at zero).
func BindAccumulate() Binding {
	return Binding{name: streams.Accumulate, concurrency: 64, key: ingest.Key, open: openIdentity, build: buildAccumulate}
}

// BindParse binds the parse stage.
func BindParse() Binding {
	return Binding{name: streams.Parse, build: func(d Deps) (Built, error) {
		g := &gates.Parse{Tools: d.Tools, Limits: d.Limits, Now: gates.Clock(d.Now)}
		return Built{Handler: d.Emit.Handler(streams.Parse, g.Handle)}, nil
	}}
}

// BindValidate binds the validate stage.
func BindValidate() Binding {
	return Binding{name: streams.Validate, build: func(d Deps) (Built, error) {
		g := &gates.Validate{Tools: d.Tools, Now: gates.Clock(d.Now)}
		h, bg := d.shadowed(g.Handle)
		return Built{Handler: d.Emit.Handler(streams.Validate, h), Background: bg}, nil
	}}
}

// BindBusiness binds the business stage.
func BindBusiness() Binding {
	return Binding{name: streams.Business, build: func(d Deps) (Built, error) {
		g := &gates.Business{Tools: d.Tools, Now: gates.Clock(d.Now)}
		h, bg := d.shadowed(g.Handle)
		return Built{Handler: d.Emit.Handler(streams.Business, h), Background: bg}, nil
	}}
}

// BindPolicy binds the policy stage and its approval sweeper.
func BindPolicy() Binding {
	return Binding{name: streams.Policy, build: buildPolicy}
}

// BindRepair binds the repair stage and opens its model (repair.go).
func BindRepair() Binding {
	return Binding{name: streams.Repair, open: openRepair, build: func(d Deps) (Built, error) {
		g := &gates.Repair{Tools: d.Tools, Now: gates.Clock(d.Now), Budget: repairBudget(d.Settings)}
		if d.Repair != nil { // a nil *Client in the interface would not be nil
			g.Model = d.Repair
		}
		return Built{Handler: d.Emit.Handler(streams.Repair, g.Handle)}, nil
	}}
}

// BindExecute binds the execute stage, which waits on tools (16 handlers),
// and opens its idempotency store and executor settings.
func BindExecute() Binding {
	return Binding{name: streams.Execute, concurrency: 16, open: openExecute, build: buildExecute}
}

// accumulate builds the one accumulate gate of a process: the events and
// their timers share its caches.
func accumulate(d Deps) *ingest.Accumulate {
	return &ingest.Accumulate{Limits: d.Limits, Now: d.Now, JS: d.JS, IdleTimeout: d.StreamIdle,
		MaxStreamEvents: d.StreamMaxEvents, TolerantProviders: d.TolerantProviders, Emit: d.Emit, Identity: d.Identity,
		AssertUsers: d.AssertUsers, ClaimTTL: d.Settings.ResponseIDTTL, Partitions: d.Settings.Fair.PartitionCount()}
}

func policyGate(d Deps) *gates.Policy {
	return &gates.Policy{Tools: d.Tools, Approvals: d.Approvals, ApprovalTTL: d.ApprovalTTL, Now: gates.Clock(d.Now)}
}

func buildExecute(d Deps) (Built, error) {
	if d.Store == nil {
		return Built{}, errors.New("stage: execute needs an idempotency store")
	}
	batches, err := d.JS.KeyValue(context.Background(), streams.BucketBatches)
	if err != nil {
		return Built{}, fmt.Errorf("stage: execute: %w", err)
	}
	now := gates.Clock(d.Now)
	x := &gates.Execute{
		Tools: d.Tools, Store: observeStore(d.Store, d.Malformed), Owner: d.Owner, Now: now, LeaseGrace: d.Settings.AckWait,
		Executors: tracing.Executors(d.Trace, d.Exec.selector(d.NC).For),
		Batches:   &batch.KV{KV: batches, Now: now, Malformed: d.Malformed.from(streams.BucketBatches)},
		Seals:     sealsOf(d.Emit), LimitEvent: d.LimitEvent, Partitions: d.Settings.Fair.PartitionCount(),
	}
	return Built{Handler: d.Emit.Handler(streams.Execute, x.Handle)}, nil
}
