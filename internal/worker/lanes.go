package worker

import (
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// lanes hands inputs to the handler goroutines. Without a key function any
// goroutine takes any input. With one, an input whose key is being handled
// waits behind it and is handled next by the same goroutine, in delivery
// order, while inputs of other keys go to any free goroutine: a stage whose
// handler waits on the network (accumulate's response-id claim) overlaps
// the waits of different keys, and the inputs of one key (a stream's
// events) stay in order. What waits is bounded by the consumer's
// MaxAckPending: none of it is acked yet.
type lanes struct {
	key  func(jetstream.Msg) string
	work chan keyed
	mu   sync.Mutex
	wait map[string][]jetstream.Msg // key in progress -> inputs behind it
}

type keyed struct {
	key string
	msg jetstream.Msg
}

func newLanes(key func(jetstream.Msg) string) *lanes {
	return &lanes{key: key, work: make(chan keyed), wait: map[string][]jetstream.Msg{}}
}

// send hands m to a goroutine, or queues it behind its key.
func (l *lanes) send(m jetstream.Msg) {
	if l.key == nil {
		l.work <- keyed{msg: m}
		return
	}
	k := l.key(m)
	l.mu.Lock()
	if q, busy := l.wait[k]; busy {
		l.wait[k] = append(q, m)
		l.mu.Unlock()
		return
	}
	l.wait[k] = nil
	l.mu.Unlock()
	l.work <- keyed{key: k, msg: m}
}

// run is one handler goroutine: it handles what it is given and then what
// queued behind that input's key.
func (l *lanes) run(handle func(jetstream.Msg)) {
	for w := range l.work {
		m := w.msg
		for {
			handle(m)
			if l.key == nil {
				break
			}
			next, ok := l.next(w.key)
			if !ok {
				break
			}
			m = next
		}
	}
}

func (l *lanes) next(k string) (jetstream.Msg, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.wait[k]
	if len(q) == 0 {
		delete(l.wait, k)
		return nil, false
	}
	l.wait[k] = q[1:]
	return q[0], true
}

// close ends the goroutines once they finished what they hold.
func (l *lanes) close() { close(l.work) }
