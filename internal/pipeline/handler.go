package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// Gate is the pure core of a stage after accumulate: one envelope in, the
// envelopes it became out. A returned error is classified by the worker
// (worker.Permanent / worker.Transient; unclassified is transient).
type Gate func(ctx context.Context, e call.Envelope) ([]call.Envelope, error)

// Handler adapts a gate to the worker; its envelopes become messages by
// em.Outputs.
func (em *Emitter) Handler(stage string, g Gate) worker.Handler {
	return func(ctx context.Context, m worker.Msg) ([]worker.Output, error) {
		e, err := call.Unmarshal(m.Data)
		if err != nil {
			return nil, worker.Permanent("undecodable", err)
		}
		envs, err := g(ctx, e)
		if errors.Is(err, call.ErrIllegalTransition) {
			return nil, worker.Permanent("illegal_transition", err)
		}
		if err != nil {
			return nil, err
		}
		var outs []worker.Output
		for _, env := range envs {
			o, err := em.Outputs(stage, env)
			if err != nil {
				return nil, worker.Permanent("encode", err)
			}
			outs = append(outs, o...)
		}
		return outs, nil
	}
}

// DeadLetter builds a stage's dead letter for an input the worker gave up
// on. A decodable envelope also ends as Failed with a result and a status
// record, so the call still has exactly one recorded outcome; anything else
// is kept as it arrived, with its headers.
func (em *Emitter) DeadLetter(stage string, now func() time.Time) worker.DeadLetter {
	return func(m worker.Msg, code string, err error) []worker.Output {
		if e, derr := call.Unmarshal(m.Data); derr == nil {
			e.Abort(stage, code, err, now())
			if outs, oerr := em.Outputs(stage, e); oerr == nil {
				return outs
			}
		}
		return []worker.Output{em.Raw(stage, code, m, err)}
	}
}

// Raw is a dead letter holding an input exactly as it arrived, with its
// headers. What does not fit what NATS can store is cut: a header value over
// InputHeaderMax (the error over ErrorHeaderMax) becomes its beginning, size
// and sha256; a body that would not fit beside the headers becomes its cut
// form.
func (em *Emitter) Raw(stage, code string, m worker.Msg, err error) worker.Output {
	h := nats.Header{}
	for k, v := range m.Header {
		h[k] = append([]string(nil), v...)
	}
	h.Set(streams.HeaderStage, stage)
	h.Set(streams.HeaderFailure, code)
	h.Set(streams.HeaderError, result.CutText(err.Error(), ErrorHeaderMax))
	h.Set(streams.HeaderOrigSubject, m.Subject)
	o := worker.Output{
		Subject: streams.DLQ(stage, code),
		MsgID:   fmt.Sprintf("dlq:%s:%d", stage, m.StreamSeq),
		Header:  h,
		Data:    m.Data,
	}
	own := []string{streams.HeaderStage, streams.HeaderFailure, streams.HeaderError, streams.HeaderOrigSubject, streams.HeaderResponseID}
	fitHeaders(h, o.MsgID, InputHeaderMax, own...)
	fits := func() bool { return int64(worker.HeaderBytes(h, o.MsgID)+len(o.Data)) <= em.maxPayload() }
	if !fits() {
		o.Data = em.cutForm(m.Data, nil, "", h.Get(streams.HeaderResponseID))
	}
	if !fits() { // a small max payload: headers and the cut form share it
		foldHeaders(h, own...)
		// An excerpt escapes to at most 6 bytes a byte in JSON.
		o.Data = em.cutFormWith(m.Data, nil, "", h.Get(streams.HeaderResponseID), max(em.bodyBudget()/8, 0))
	}
	return o
}
