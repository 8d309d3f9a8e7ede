package worker

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// gapFloor is the shortest stand-still reported; a shorter wait is not
// looked at (no metadata parsed), so a busy stage pays one clock read per
// input.
const gapFloor = time.Millisecond

// gap reports how long the stage stood still before m was delivered: from
// the later of the moment the worker was ready for input and m's arrival
// on its stream, to now. A first delivery is the oldest input the consumer
// had not delivered, so input waited on the server all that time; a
// redelivery is left out (it waited for its nak delay or AckWait, by
// design). Time the handlers were all busy is not counted: the worker was
// not ready.
func (w *Worker) gap(m jetstream.Msg, ready time.Time) {
	now := time.Now()
	if now.Sub(ready) < gapFloor {
		return
	}
	md, err := m.Metadata()
	if err != nil || md.NumDelivered > 1 {
		return
	}
	since := ready
	if md.Timestamp.After(since) {
		since = md.Timestamp
	}
	if d := now.Sub(since); d >= gapFloor {
		w.cfg.Gap(w.cfg.Stage, d)
	}
}
