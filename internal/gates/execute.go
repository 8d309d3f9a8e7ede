package gates

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// Execute is the one gate with side effects. A call runs at most once: the
// idempotency record is claimed before the executor is called, a completed
// record returns its stored result, a live claim waits, and a claim whose
// lease ran out without an answer is outcome_unknown — never run again
// blindly.
//
// The calls of an atomic batch (see batch.go) run only once every call of
// the batch passed every gate.
type Execute struct {
	Tools     Tools
	Store     idem.Store
	Executors func(t *tool.Compiled) execute.Executor // the executor for a tool
	Owner     string                                  // this process, for claims
	Retention time.Duration                           // how long records are kept; default 24h
	// LeaseGrace is added to the tool's timeout to make a claim's lease:
	// time to store the answer after the executor replied. Default 30s.
	LeaseGrace time.Duration
	// Batches coordinates atomic batches; nil: every call runs on its own.
	Batches Batches
	// BatchWait is how long one delivery waits in the handler for the rest
	// of its atomic batch before it is redelivered (default 3s);
	// BatchTimeout bounds the whole wait from the batch's first arrival
	// (default 30s), after which the batch is aborted.
	BatchWait, BatchTimeout time.Duration
	Now                     Clock
	// Seals holds every sealing stage's keys: a call runs only when its
	// seals verify (execute_seal.go). nil: nothing runs, every call ends
	// seal_invalid.
	Seals *seal.Keyring
	// Partitions is the deployment's P (streams.Fair.PartitionCount): a
	// request to a NATS executor names the call's partition of the
	// executors' replay bucket, streams.Partition(tenant, response id, P),
	// the partition of its execute stream. 0 or 1: partition 0, named by
	// no header.
	Partitions int
	// LimitEvent, if set, is told of every limit a call was charged
	// (fill: the key's usage over the maximum), rejected or held by
	// (execute_limit.go); the metrics count them by limit name.
	LimitEvent func(limit, event string, fill float64)

	notRun sync.Map // keys this process claimed but never ran (the claim's answer was lost)
	mem    memory   // keys this process claimed, and their answers
}

// Handle implements pipeline.Gate.
// It runs a call only when its gate seals verify (execute_seal.go).
func (x *Execute) Handle(ctx context.Context, e call.Envelope) ([]call.Envelope, error) {
	checked, outs, ok := x.checkSeals(e)
	if !ok {
		return outs, nil
	}
	outs, err := x.handle(ctx, e)
	for i := range outs {
		outs[i].Note(checked)
	}
	return outs, err
}

func (x *Execute) handle(ctx context.Context, e call.Envelope) ([]call.Envelope, error) {
	t, ok := x.Tools.Lookup(e.ToolName)
	if !ok {
		return x.end(e, call.ExecutionFailed, "tool "+e.ToolName+" is no longer registered; nothing was run")
	}
	if why := circuitOpen(ctx); why != "" {
		return x.end(e, call.ExecutionFailed, why)
	}
	retention := x.Retention
	if retention == 0 {
		retention = 24 * time.Hour
	}
	if done, outs, err := x.batch(ctx, &e, t); done {
		return outs, err
	}
	now := x.Now()
	key := idem.Key(e.CallID, e.ToolName, e.Arguments)
	e.IdempotencyKey = key
	grace := x.LeaseGrace
	if grace == 0 {
		grace = 30 * time.Second
	}
	lease := t.Timeout + grace
	var err error
	part := streams.Partition(e.Request.Tenant, e.ResponseID, x.Partitions)
	rec := idem.Record{
		Key: key, CallID: e.CallID, Tool: e.ToolName, Fingerprint: idem.Fingerprint(e.ToolName, e.Arguments),
		Owner: x.Owner, LeaseUntil: now.Add(lease), ClaimedAt: now.UTC(), ReplayPartition: part,
	}
	if rec.Charges, err = charges(e, t); err != nil { // execute_limit.go
		return x.end(e, call.LimitExceeded, "the call could not be metered, so it was not run: "+err.Error())
	}
	if m, ok := x.mem.get(key); ok {
		switch m.state {
		case memoRunning:
			return nil, worker.Transient("claimed_elsewhere", t.Timeout, fmt.Errorf("gates: call %s is being executed by this process", e.CallID))
		case memoUnknown:
			return x.end(e, call.OutcomeUnknown, "this process sent the call and got no answer: it may or may not have run; reconcile with the tool using idempotency key "+key)
		}
		e.Result = m.reply.Result
		e.Note("already executed by this process: its answer is returned and the tool is not run again")
		if m.reply.OK {
			return x.end(e, call.Executed)
		}
		return x.end(e, call.ExecutionFailed, m.reply.Error)
	}
	existing, claimed, err := x.Store.Claim(ctx, rec, retention)
	le, isLimit := idem.AsLimit(err)
	switch {
	case isLimit:
		return x.overLimit(ctx, e, t, le)
	case errors.Is(err, idem.ErrConflict):
		return x.end(e, call.IdempotencyConflict, "call "+e.CallID+" was already executed with different arguments; this one was not run")
	case err != nil:
		// The claim may or may not have been written; remember that we did
		// not run it, so our own pending record can be taken back.
		x.notRun.Store(key, true)
		return nil, worker.Transient("idempotency_store", 0, err)
	}
	if !claimed {
		if _, mine := x.notRun.Load(key); mine && existing.State == idem.Pending && existing.Owner == x.Owner {
			claimed, part = true, existing.ReplayPartition // the partition its record names
		}
	}
	if !claimed {
		switch {
		case existing.State == idem.Completed:
			e.Result = existing.Result
			e.Note("already executed: the stored result is returned and the tool is not run again")
			if existing.OK {
				return x.end(e, call.Executed)
			}
			return x.end(e, call.ExecutionFailed, existing.Error)
		case existing.LeaseLive(now):
			return nil, worker.Transient("claimed_elsewhere", existing.LeaseUntil.Sub(now), fmt.Errorf("gates: call %s is being executed by %s", e.CallID, existing.Owner))
		default:
			return x.reconcile(ctx, e, t, existing, retention, part)
		}
	}
	x.notRun.Delete(key)
	if claimed && x.LimitEvent != nil {
		for _, c := range existing.Charges {
			x.LimitEvent(c.Limit, LimitCharged, float64(c.Used)/float64(max(c.Max, 1)))
		}
	}
	x.mem.put(key, memo{state: memoRunning})
	if aw := worker.AckWait(ctx); aw > 0 && t.Timeout >= aw/2 { // keep a long call from being redelivered while it runs
		defer worker.KeepAlive(ctx)()
	}
	exec := x.Executors(t)
	rctx, cancel := context.WithTimeout(ctx, t.Timeout)
	req := execute.Request{Tool: e.ToolName, CallID: e.CallID, IdempotencyKey: key, Arguments: e.Arguments, ReplayPartition: part}
	reply, err := exec.Execute(rctx, req)
	cancel()
	switch {
	case execute.CannotRun(err):
		// Not run, and a retry cannot fare better: end the call now (one dead
		// letter, a result), with the claim released for a replay once the
		// cause is fixed.
		x.mem.forget(key)
		if rerr := x.Store.Release(ctx, key, x.Owner); rerr != nil {
			return x.end(e, call.OutcomeUnknown, err.Error(), "and the claim could not be released: "+rerr.Error())
		}
		return nil, worker.Permanent(cannotRunCode(err), err)
	case errors.Is(err, execute.ErrNotRun):
		x.mem.forget(key)
		if rerr := x.Store.Release(ctx, key, x.Owner); rerr != nil {
			return x.end(e, call.OutcomeUnknown, err.Error(), "and the claim could not be released: "+rerr.Error())
		}
		return nil, worker.Transient("executor_unavailable", execute.RetryAfter(err), err)
	case err != nil:
		// The answer was lost (a timeout, a broken connection): ask the tool
		// once whether the call happened before calling the outcome unknown.
		known, ok := x.askOnce(ctx, t, req)
		if !ok {
			x.mem.put(key, memo{state: memoUnknown})
			return x.end(e, call.OutcomeUnknown, err.Error()+": not retried; reconcile with the tool using the idempotency key")
		}
		reply = known
		e.Note("reconciled: the answer was lost (" + err.Error() + ") but the executor reports the call ran; the tool was not run again")
	}
	x.mem.put(key, memo{state: memoDone, reply: reply})
	var cerr error
	for attempt := range 5 { // the answer is in hand: try hard to keep it
		if cerr = x.Store.Complete(ctx, key, x.Owner, reply.OK, reply.Result, reply.Error, retention); cerr == nil || errors.Is(cerr, idem.ErrNotOwner) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	if cerr != nil {
		e.Note("the executor answered but its record could not be completed (" + cerr.Error() + "); a later delivery will see outcome_unknown, never a second run")
	}
	e.Result = reply.Result
	if !reply.OK {
		return x.end(e, call.ExecutionFailed, reply.Error)
	}
	return x.end(e, call.Executed)
}

func (x *Execute) end(e call.Envelope, to call.Status, errs ...string) ([]call.Envelope, error) {
	if err := e.Move(streams.Execute, to, x.Now(), errs...); err != nil {
		return nil, err
	}
	return []call.Envelope{e}, nil
}

// cannotRunCode is the dead letter's failure name for a call that cannot run
// as configured.
func cannotRunCode(err error) string {
	switch {
	case errors.Is(err, execute.ErrDestination):
		return "executor_destination_refused"
	case errors.Is(err, execute.ErrRefused):
		return "executor_signature_refused"
	}
	return "executor_cannot_run"
}
