package gates

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/batch"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/worker"
)

// Batches coordinates atomic batches (batch.KV is the JetStream key-value
// implementation; see package batch).
type Batches interface {
	// Tools returns the tool names recorded for the calls of batch b, by
	// index; calls with no record are absent.
	Tools(ctx context.Context, b call.Batch) (map[int]string, error)
	// Await records that call b.Index (callID) passed every gate and returns
	// the batch's decision, waiting for it at most wait; decided is false
	// when there was none by then. It decides abort once timeout has passed
	// since the batch's first call arrived.
	Await(ctx context.Context, b call.Batch, callID string, wait, timeout time.Duration) (d batch.Decision, decided bool, err error)
}

// batch holds back a call of an atomic batch until the batch decided. done
// is true when the call ends here (aborted) or must be redelivered (err).
func (x *Execute) batch(ctx context.Context, e *call.Envelope, t *tool.Compiled) (done bool, outs []call.Envelope, err error) {
	if x.Batches == nil || e.Batch.Size < 2 {
		return false, nil, nil
	}
	atomic, err := x.atomic(ctx, *e, t)
	if err != nil {
		return true, nil, worker.Transient("batch_store", 0, err)
	}
	if !atomic {
		return false, nil, nil
	}
	wait, timeout := x.BatchWait, x.BatchTimeout
	if wait <= 0 {
		wait = 3 * time.Second
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	d, decided, err := x.Batches.Await(ctx, e.Batch, e.CallID, wait, timeout)
	switch {
	case err != nil:
		return true, nil, worker.Transient("batch_store", 0, err)
	case !decided:
		return true, nil, worker.Transient("batch_waiting", 0, fmt.Errorf("gates: call %s waits for the other calls of atomic batch %s", e.CallID, e.Batch.ID))
	case !d.Run:
		outs, err := x.end(*e, call.BatchAborted, d.Reason)
		return true, outs, err
	}
	e.Note(fmt.Sprintf("atomic batch %s: all %d calls passed every gate", e.Batch.ID, e.Batch.Size))
	return false, nil, nil
}

// atomic reports whether the call's batch is atomic: by the request header,
// by its own tool, or by the tool of any other call of the response.
func (x *Execute) atomic(ctx context.Context, e call.Envelope, t *tool.Compiled) (bool, error) {
	if e.Batch.Atomic || t.Def.Atomic {
		return true, nil
	}
	names, err := x.Batches.Tools(ctx, e.Batch)
	if err != nil {
		return false, err
	}
	for i, name := range names {
		if i == e.Batch.Index {
			continue
		}
		if ct, ok := x.Tools.Lookup(name); ok && ct.Def.Atomic {
			return true, nil
		}
	}
	return false, nil
}
