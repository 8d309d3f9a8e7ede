package worker

import (
	"fmt"
	"runtime/debug"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Attempt is where a transient failure leaves its input: delivery N failed,
// the consumer delivers at most Of times (0: no bound), and the next
// delivery comes at Next.
type Attempt struct {
	N    int
	Of   int
	Next time.Time
}

// retry naks m after delay, first publishing what cfg.Retrying builds for
// it. Those outputs are checked against what NATS can store like any
// others; one that cannot fit is not published, and the nak is the same.
func (w *Worker) retry(jm jetstream.Msg, m Msg, err error, delay time.Duration) pending {
	p := pending{msg: jm, in: m, nak: true, delay: delay}
	if w.cfg.Retrying == nil {
		return p
	}
	a := Attempt{N: int(m.NumDelivered), Next: time.Now().Add(delay)}
	if w.maxDeliver > 0 {
		a.Of = w.maxDeliver
	}
	outs := w.hook(func() []Output { return w.cfg.Retrying(m, err, a) })
	if len(outs) == 0 {
		return p
	}
	if ferr := w.fits(outs); ferr != nil {
		w.cfg.Log.Warn().Err(ferr).Str("stage", w.cfg.Stage).Uint64("seq", m.StreamSeq).Msg("what the input waits for does not fit what NATS can store: not published")
		return p
	}
	q := w.publish(jm, m, outs, false)
	q.nak, q.delay, q.retrying = true, delay, true
	return q
}

// redelivered runs cfg.Redelivered; a panic keeps m as it was.
func (w *Worker) redelivered(m Msg) (out Msg) {
	out = m
	defer func() {
		if r := recover(); r != nil {
			w.cfg.Log.Error().Str("stage", w.cfg.Stage).Uint64("seq", m.StreamSeq).Str("panic", fmt.Sprint(r)).Str("stack", string(debug.Stack())).Msg("redelivery hook")
			out = m
		}
	}()
	return w.cfg.Redelivered(m)
}

// hook runs a builder of extra outputs; a panic builds nothing, the input's
// fate is the same.
func (w *Worker) hook(f func() []Output) (outs []Output) {
	defer func() {
		if r := recover(); r != nil {
			w.cfg.Log.Error().Str("stage", w.cfg.Stage).Str("panic", fmt.Sprint(r)).Str("stack", string(debug.Stack())).Msg("retry hook")
			outs = nil
		}
	}()
	return f()
}
