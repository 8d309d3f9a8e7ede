package stage

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/gates"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// waits keeps a retried call's status record saying what it waits for
// (pipeline.Wait): the worker's Retrying and Redelivered hooks of a stage
// whose calls wait on something outside toolgate (execute: an executor).
type waits struct {
	stage string
	calls jetstream.KeyValue // the calls bucket; nil: records are written, never read
	emit  *pipeline.Emitter
	now   func() time.Time
	log   zerolog.Logger
}

// newWaits opens the calls bucket for st's waits. A stage that may not read
// it (an older least-privilege grant) still writes its waits, without the
// earlier attempts' steps and without compare-and-set.
func newWaits(st string, d Deps) *waits {
	w := &waits{stage: st, emit: d.Emit, now: d.Now, log: d.Log}
	if kvs := "KV_" + streams.BucketCalls; d.may != nil && !d.may(api("STREAM.INFO", kvs), api("DIRECT.GET", kvs, "x")) {
		return w // its grant does not include reading the calls bucket
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kv, err := d.JS.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		d.Log.Warn().Err(err).Str("stage", st).Msg("calls bucket not readable: waiting calls' records will not keep their earlier attempts")
		return w
	}
	w.calls = kv
	return w
}

// retrying is the status record of a call whose delivery a.N failed
// transiently: what it waits for, the attempt, when the next comes, and a
// wait step in its history. A call another delivery is executing right now
// does not wait, and a record that already says the call ended is left
// alone; the write is a compare-and-set on the record read, so a wait never
// overwrites an outcome stored since.
func (w *waits) retrying(m worker.Msg, err error, a worker.Attempt) []worker.Output {
	var we *worker.Error
	if errors.As(err, &we) && we.Code == "claimed_elsewhere" {
		return nil
	}
	e, derr := call.Unmarshal(m.Data)
	if derr != nil {
		return nil
	}
	now := w.now()
	rec, rev, ok, absent := w.lookup(e.CallID)
	if ok && rec.Status.Terminal() {
		return nil
	}
	if ok { // none when redelivered already carried them
		e.History = append(e.History, pipeline.CarriedWaits(rec, e, w.stage)...)
	}
	wait := pipeline.Wait{Stage: w.stage, For: pipeline.WaitRetry, Detail: reason(err), Attempt: a.N, Of: a.Of,
		Since: pipeline.WaitingSince(e, w.stage, now).UTC(), Next: a.Next.UTC()}
	var hold *gates.LimitHold
	switch {
	case errors.As(err, &hold): // not a failure: no attempt count
		wait.For, wait.Limit, wait.Detail, wait.Attempt, wait.Of, wait.Next = pipeline.WaitLimit, hold.Limit, hold.Why, 0, 0, hold.Until.UTC()
	case errors.Is(err, execute.ErrNotRun):
		wait.For = pipeline.WaitExecutor
	}
	out := w.emit.Waiting(w.stage, e, wait, now)
	// No record yet (none is written when a call enters, issue 30): the
	// wait is stored only while there is still none (last subject sequence
	// 0, a create), so it never overwrites an outcome another delivery
	// stored since it was read.
	if ok || absent {
		out.Header = nats.Header{}
		out.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
	}
	return []worker.Output{out}
}

// redelivered carries the wait steps the call's record holds into the
// envelope, so whatever the call becomes (an outcome, a dead letter) keeps
// them in its history.
func (w *waits) redelivered(m worker.Msg) worker.Msg {
	e, err := call.Unmarshal(m.Data)
	if err != nil {
		return m
	}
	rec, _, ok := w.record(e.CallID)
	if !ok {
		return m
	}
	steps := pipeline.CarriedWaits(rec, e, w.stage)
	if len(steps) == 0 {
		return m
	}
	e.History = append(e.History, steps...)
	data, err := e.Marshal()
	if err != nil {
		return m
	}
	m.Data = data
	return m
}

// record reads the call's status record; ok is false when there is none or
// it cannot be read or decoded (a cut record, a broken one).
func (w *waits) record(callID string) (pipeline.StatusRecord, uint64, bool) {
	rec, rev, ok, _ := w.lookup(callID)
	return rec, rev, ok
}

// lookup is record, and says whether the bucket has no record of callID at
// all (absent: read, and not found; false when the read failed or the
// bucket is not readable).
func (w *waits) lookup(callID string) (rec pipeline.StatusRecord, rev uint64, ok, absent bool) {
	if w.calls == nil {
		return rec, 0, false, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	entry, err := w.calls.Get(ctx, callID)
	if err != nil {
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			w.log.Debug().Err(err).Str("call_id", callID).Msg("status record not read")
			return rec, 0, false, false
		}
		return rec, 0, false, true
	}
	if err := json.Unmarshal(entry.Value(), &rec); err != nil || rec.CallID != callID {
		return pipeline.StatusRecord{}, 0, false, false
	}
	return rec, entry.Revision(), true, false
}

// reason is what a transient failure says, without the worker's and the
// executor's prefixes.
func reason(err error) string {
	var we *worker.Error
	if errors.As(err, &we) {
		err = we.Err
	}
	return execute.Why(err)
}
