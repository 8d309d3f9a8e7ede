package worker

import (
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// HeaderAttempt carries a call's attempt number on a scheduled retry: the
// delivery count starts again with each scheduled copy.
const HeaderAttempt = "Toolgate-Attempt"

// Message schedule headers (nats-server 2.12, ADR-51).
const (
	headerSchedule       = "Nats-Schedule"
	headerScheduleTarget = "Nats-Schedule-Target"
)

// attempt is m's attempt number: the attempts before its scheduled copy
// (HeaderAttempt) plus its deliveries.
func attempt(m Msg) uint64 {
	before, _ := strconv.ParseUint(m.Header.Get(HeaderAttempt), 10, 32)
	if before > 0 {
		before--
	}
	return before + max(m.NumDelivered, 1)
}

// reschedule acks m once a copy of it is stored as a message scheduled for
// delay from now on cfg.Schedule's subject, aimed at m's own subject, with
// its attempt number: a retry that waits holds no pending slot of the
// consumer and no goroutine (issue 38). What cfg.Retrying builds is
// published with it. Any failed publish naks m instead, as a retry always
// did; the copy's message id keeps a redelivered m from scheduling twice.
func (w *Worker) reschedule(jm jetstream.Msg, m Msg, err error, n uint64, delay time.Duration) pending {
	// A schedule's time has a second's resolution: round up.
	at := time.Now().Add(max(delay, time.Second)).Truncate(time.Second).Add(time.Second)
	var outs []Output
	if w.cfg.Retrying != nil {
		a := Attempt{N: int(n), Next: at}
		if w.maxDeliver > 0 {
			a.Of = w.maxDeliver
		}
		outs = w.hook(func() []Output { return w.cfg.Retrying(m, err, a) })
		if w.fits(outs) != nil {
			outs = nil
		}
	}
	h := nats.Header{}
	for k, v := range m.Header {
		h[k] = append([]string(nil), v...)
	}
	h.Del(nats.MsgIdHdr)
	h.Set(headerSchedule, "@at "+at.UTC().Format(time.RFC3339))
	h.Set(headerScheduleTarget, m.Subject)
	h.Set(HeaderAttempt, strconv.FormatUint(n+1, 10))
	id := strconv.FormatUint(m.StreamSeq, 10)
	outs = append(outs, Output{Subject: w.cfg.Schedule(m.Subject, id), MsgID: w.cfg.Durable + ":retry:" + id, Header: h, Data: m.Data})
	p := w.publish(jm, m, outs, false)
	p.delay = delay // a failed publish naks after the same delay
	return p
}
