package stage

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/ingest"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// Built is what a stage's binding builds from Deps: the handler of its main
// consumer, the handlers of its Extra consumers (streams.Stage.Extra) by
// durable name, and loops that run beside its workers until ctx is done.
type Built struct {
	Handler    worker.Handler
	Extra      map[string]worker.Handler
	Background []func(context.Context)
}

// binding is the runtime half of a row of streams.Table.
type binding struct {
	concurrency int // handler goroutines unless Deps.Concurrency says; 0: 1
	// key, when set, keeps the inputs of one key in order while inputs of
	// other keys are handled concurrently (worker.Config.Key).
	key   func(worker.Msg) string
	build func(d Deps) (Built, error)
}

// bindings binds every stage name of streams.Table to its code: a stage
// whose gate is one handler (handlers.go) needs no entry of its own here.
func bindings() map[string]binding {
	b := map[string]binding{}
	for _, st := range streams.Names() {
		b[st] = binding{build: func(d Deps) (Built, error) {
			h, err := handler(st, d, nil)
			return Built{Handler: h}, err
		}}
	}
	// Each whole response waits for its response-id claim, a round trip to
	// the server that takes milliseconds under load: responses are handled
	// concurrently, the inputs of one (a stream's events) in order. At 8
	// goroutines accumulate still held the pipeline back (bench: 2,113
	// calls/s; 64: 2,455, with every other stage's backlog at zero).
	b[streams.Accumulate] = binding{concurrency: 64, key: ingest.Key, build: buildAccumulate}
	b[streams.Policy] = binding{build: buildPolicy}
	// It waits on tools.
	b[streams.Execute] = binding{concurrency: 16, build: b[streams.Execute].build}
	return b
}

// buildAccumulate: one accumulate gate serves the events and their timers
// (streamed responses that stop without a terminal event are settled by the
// timer consumer): they share its cache of stream assemblies and progress.
func buildAccumulate(d Deps) (Built, error) {
	acc := accumulate(d)
	h, err := handler(streams.Accumulate, d, acc)
	if err != nil {
		return Built{}, err
	}
	return Built{Handler: h, Extra: map[string]worker.Handler{streams.AccumulateTimer: acc.HandleTimer}}, nil
}

// buildPolicy: calls waiting for a human live in the approvals bucket, and
// the approval sweeper runs beside the policy workers.
func buildPolicy(d Deps) (Built, error) {
	if d.Approvals == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		kv, err := d.JS.KeyValue(ctx, streams.BucketApprovals)
		cancel()
		if err != nil {
			return Built{}, fmt.Errorf("stage: approvals bucket: %w", err)
		}
		d.Approvals = approval.NewStore(kv)
	}
	if d.Approvals.OnMalformed == nil {
		d.Approvals.OnMalformed = d.Malformed.from(streams.BucketApprovals)
	}
	calls, err := d.JS.KeyValue(context.Background(), streams.BucketCalls)
	if err != nil {
		return Built{}, fmt.Errorf("stage: calls bucket: %w", err)
	}
	sw := &approval.Sweeper{Store: d.Approvals, JS: d.JS, Every: d.ApprovalSweep, Now: d.Now, Log: d.Log, Calls: calls}
	h, err := handler(streams.Policy, d, nil)
	if err != nil {
		return Built{}, err
	}
	bg := []func(context.Context){sw.Run}
	if d.Shadow != nil {
		bg = append(bg, func(ctx context.Context) { d.Shadow.Run(ctx, d.ShadowFlush) })
	}
	return Built{Handler: h, Background: bg}, nil
}
