package producer

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Outcome is one message toolgate published on a response's results
// subject (toolgate.results.<tenant>.<response-id>, or with a partition
// token after it, wire.ResultsPartition):
// a call's terminal outcome (Call), or, for a response that yielded no call
// at all, the response's (Response). Exactly one of the two is set.
type Outcome struct {
	Subject  string
	Data     []byte // the message as published
	Call     *wire.Result
	Response *wire.ResponseResult
}

// Watch receives the outcomes of the responses it watches. Results are
// plain NATS messages (toolgate.results.> is also kept in a stream, but a
// producer's user may not create consumers), so a Watch sees only what is
// published after it subscribed: watch a response before publishing it.
type Watch struct {
	nc     *nats.Conn
	tenant string
	ch     chan *nats.Msg
	mu     sync.Mutex
	sub    []*nats.Subscription
	rids   []string
	prog   map[string]Progress // the latest progress of each open stream
	// waits holds the calls said to wait (waiting.go), by response id and
	// call id; done the calls whose outcome Next returned.
	waits map[string]map[string]wire.Waiting
	done  map[string]bool
}

// buffered bounds the outcomes a Watch holds before the caller reads them;
// past it NATS drops messages (a slow consumer).
const buffered = 1024

// Watch subscribes to the results of each response id.
func (p *Producer) Watch(responseIDs ...string) (*Watch, error) {
	w := &Watch{nc: p.nc, tenant: p.tenant, ch: make(chan *nats.Msg, buffered), prog: map[string]Progress{},
		waits: map[string]map[string]wire.Waiting{}, done: map[string]bool{}}
	for _, rid := range responseIDs {
		if err := w.Add(rid); err != nil {
			w.Stop()
			return nil, err
		}
	}
	return w, nil
}

// Add watches one more response id (a recording that holds several
// responses back to back): its results, its stream's progress events (see
// Progress) and the notices of its calls that wait (see Waiting).
func (w *Watch) Add(responseID string) error {
	if !ValidResponseID(responseID) {
		return fmt.Errorf("producer: watch %q: not a valid response id", responseID)
	}
	// Both forms of its results subject: with --partitions P > 1 a
	// response of partition k >= 1 has them on ….<response-id>.p<k>.
	var subs []*nats.Subscription
	undo := func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}
	for _, subj := range wire.ResultsForms(w.tenant, responseID) {
		sub, err := w.nc.ChanSubscribe(subj, w.ch)
		if err != nil {
			undo()
			return fmt.Errorf("producer: watch %s: %w", responseID, err)
		}
		subs = append(subs, sub)
	}
	prog, err := w.nc.Subscribe(wire.Progress(w.tenant, responseID), w.progressed)
	if err != nil {
		undo()
		return fmt.Errorf("producer: watch %s: %w", responseID, err)
	}
	w.mu.Lock()
	w.sub = append(append(w.sub, subs...), prog)
	w.rids = append(w.rids, responseID)
	w.mu.Unlock()
	return nil
}

// responseIDs lists the watched response ids in the order added.
func (w *Watch) responseIDs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.rids...)
}

// Stop unsubscribes from every response.
func (w *Watch) Stop() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var first error
	for _, s := range w.sub {
		if err := s.Unsubscribe(); err != nil && first == nil {
			first = fmt.Errorf("producer: %w", err)
		}
	}
	w.sub = nil
	return first
}

// Next returns the next outcome, or ctx's error. A message that is neither
// a call's nor a response's result is an error naming its subject; the
// Watch stays usable.
func (w *Watch) Next(ctx context.Context) (Outcome, error) {
	select {
	case m := <-w.ch:
		o, err := decode(m.Subject, m.Data)
		if o.Call != nil {
			w.ended(o.Call.ResponseID, o.Call.CallID)
		}
		return o, err
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

// decode tells a call's result (it has a call_id) from a response's.
func decode(subject string, data []byte) (Outcome, error) {
	o := Outcome{Subject: subject, Data: data}
	var probe struct {
		CallID string `json:"call_id"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return o, fmt.Errorf("producer: %s: a result that is not JSON: %w", subject, err)
	}
	if probe.CallID != "" {
		o.Call = new(wire.Result)
		if err := json.Unmarshal(data, o.Call); err != nil {
			return Outcome{Subject: subject, Data: data}, fmt.Errorf("producer: %s: %w", subject, err)
		}
		return o, nil
	}
	o.Response = new(wire.ResponseResult)
	if err := json.Unmarshal(data, o.Response); err != nil {
		return Outcome{Subject: subject, Data: data}, fmt.Errorf("producer: %s: %w", subject, err)
	}
	return o, nil
}
