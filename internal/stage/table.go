package stage

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
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
	// Untraced names the inputs of Handler that get no span (tracing.Handler).
	Untraced func(worker.Msg) bool
}

// Binding is the runtime half of a row of streams.Table: the code of one
// stage. Each services/<stage>/main.go passes only its own (BindParse, ...,
// handlers.go) to Main, so a stage binary links its own gate and not the
// others'; Run, for toolgate up, binds every stage (bindings).
type Binding struct {
	name        string
	concurrency int // handler goroutines unless Deps.Concurrency says; 0: 1
	// key, when set, keeps the inputs of one key in order while inputs of
	// other keys are handled concurrently (worker.Config.Key).
	key func(worker.Msg) string
	// open, when set, readies in d what this stage alone uses (execute's
	// idempotency store, the repair model, accumulate's identity issuer)
	// before any gate is built; the func it returns releases it.
	open  func(ctx context.Context, cfg Config, d *Deps) (func(), error)
	build func(d Deps) (Built, error)
}

// Name is the stage the binding binds.
func (b Binding) Name() string { return b.name }

// bindings binds every stage name of streams.Table to its code.
func bindings() map[string]Binding {
	b := map[string]Binding{}
	for _, bd := range []Binding{BindAccumulate(), BindParse(), BindValidate(), BindBusiness(), BindPolicy(), BindRepair(), BindExecute()} {
		b[bd.name] = bd
	}
	return b
}

// buildAccumulate: one accumulate gate serves the events and their timers
// (streamed responses that stop without a terminal event are settled by the
// timer consumer): they share its cache of stream assemblies and progress.
func buildAccumulate(d Deps) (Built, error) {
	acc := accumulate(d)
	return Built{Handler: acc.Handle, Extra: map[string]worker.Handler{streams.AccumulateTimer: acc.HandleTimer}, Untraced: acc.PassesOver}, nil
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
	h, bg := d.shadowed(policyGate(d).Handle)
	bg = append(bg, sw.Run)
	return Built{Handler: d.Emit.Handler(streams.Policy, h), Background: bg}, nil
}
