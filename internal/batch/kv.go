package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// KV keeps batch marks and decisions in the toolgate_batches bucket.
// Every record it reads is checked (batch_record.go): a malformed mark or
// decision aborts its batch, never runs it and never stalls it.
type KV struct {
	KV  jetstream.KeyValue
	Now func() time.Time
	// Malformed, when set, is told of every malformed record read (log it,
	// count it).
	Malformed func(key string, err error)
}

func (k *KV) malformed(key string, err error) {
	if k.Malformed != nil {
		k.Malformed(key, err)
	}
}

// Tools returns the tool names recorded for the calls of batch b, by
// index; calls with no record are absent.
func (k *KV) Tools(ctx context.Context, b call.Batch) (map[int]string, error) {
	out := map[int]string{}
	for i := range b.Size {
		e, err := k.KV.Get(ctx, streams.BatchKey(b.ID, "tool", i))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("gates: batch %s: %w", b.ID, err)
		}
		// The tool as the model named it: any bytes, only ever looked up.
		out[i] = string(e.Value())
	}
	return out, nil
}

// Await records that call b.Index (callID) passed every gate and returns
// the batch's decision, waiting for it at most wait; decided is false when
// there was none by then. It decides abort once timeout has passed since the
// batch's first call arrived.
func (k *KV) Await(ctx context.Context, b call.Batch, callID string, wait, timeout time.Duration) (Decision, bool, error) {
	if d, ok, err := k.decision(ctx, b.ID); err != nil || ok {
		return d, ok, err
	}
	mark, _ := json.Marshal(PassMark{CallID: callID, At: k.Now().UTC()})
	if _, err := k.KV.Create(ctx, streams.BatchKey(b.ID, "passed", b.Index), mark); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return Decision{}, false, fmt.Errorf("gates: batch %s: %w", b.ID, err)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	w, err := k.KV.Watch(wctx, b.ID+".>")
	if err != nil {
		return Decision{}, false, fmt.Errorf("gates: batch %s: watch: %w", b.ID, err)
	}
	defer w.Stop()
	st := state{id: b.ID, size: b.Size, passed: map[int]time.Time{}, failed: map[int]FailMark{}, malformed: k.malformed}
	live := false
	for {
		select {
		case en, ok := <-w.Updates():
			if !ok {
				return k.settle(ctx, b.ID, &st, timeout)
			}
			if en == nil {
				live = true
			} else {
				st.add(en)
			}
			if !live {
				continue
			}
			if st.decision != nil {
				return *st.decision, true, nil
			}
			if d, ok := st.decide(k.Now(), timeout); ok {
				return k.decide(ctx, b.ID, d)
			}
		case <-wctx.Done():
			return k.settle(ctx, b.ID, &st, timeout)
		}
	}
}

// settle is the end of one wait: decide on a timeout, else undecided.
func (k *KV) settle(ctx context.Context, id string, st *state, timeout time.Duration) (Decision, bool, error) {
	if ctx.Err() != nil {
		return Decision{}, false, ctx.Err()
	}
	if d, ok := st.decide(k.Now(), timeout); ok {
		return k.decide(ctx, id, d)
	}
	return Decision{}, false, nil
}

// decide creates the batch's decision unless one exists; it returns the one
// that holds.
func (k *KV) decide(ctx context.Context, id string, d Decision) (Decision, bool, error) {
	d.At = k.Now().UTC()
	data, _ := json.Marshal(d)
	if _, err := k.KV.Create(ctx, streams.BatchDecisionKey(id), data); err == nil {
		return d, true, nil
	} else if !errors.Is(err, jetstream.ErrKeyExists) {
		return Decision{}, false, fmt.Errorf("gates: batch %s: decide: %w", id, err)
	}
	return k.decision(ctx, id)
}

func (k *KV) decision(ctx context.Context, id string) (Decision, bool, error) {
	e, err := k.KV.Get(ctx, streams.BatchDecisionKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Decision{}, false, nil
	}
	if err != nil {
		return Decision{}, false, fmt.Errorf("gates: batch %s: %w", id, err)
	}
	d, err := DecodeDecision(e.Value())
	if err != nil {
		k.malformed(e.Key(), err)
		return malformedDecision(e.Key(), err), true, nil
	}
	return d, true, nil
}

// state is what a waiting call knows of its batch.
type state struct {
	id       string
	size     int
	passed   map[int]time.Time
	failed   map[int]FailMark
	bad      string // the first malformed record seen: the batch aborts
	decision *Decision

	malformed func(key string, err error)
}

// add takes in one entry of the batch's watch. A malformed entry, or one
// that panics, makes the batch abort; a key toolgate never writes (another
// kind, an index outside the batch) is told and ignored.
func (s *state) add(en jetstream.KeyValueEntry) {
	defer func() {
		if p := recover(); p != nil {
			s.bad = fmt.Sprintf("record %s could not be read (%v)", en.Key(), p)
		}
	}()
	if en.Operation() != jetstream.KeyValuePut {
		return
	}
	kind, i, err := parseBatchKey(s.id, s.size, en.Key())
	if err != nil {
		if s.malformed != nil {
			s.malformed(en.Key(), err)
		}
		return
	}
	fail := func(err error) {
		if s.malformed != nil {
			s.malformed(en.Key(), err)
		}
		if s.bad == "" {
			s.bad = fmt.Sprintf("record %s is malformed (%v)", en.Key(), err)
		}
	}
	switch kind {
	case "decision":
		d, err := DecodeDecision(en.Value())
		if err != nil {
			fail(err)
			d = malformedDecision(en.Key(), err)
		}
		s.decision = &d
	case "passed":
		m, err := DecodePassMark(call.ID(s.id, i), en.Value())
		if err != nil {
			fail(err)
			return
		}
		s.passed[i] = m.At
	case "failed":
		m, err := DecodeFailMark(call.ID(s.id, i), en.Value())
		if err != nil {
			fail(err)
			return
		}
		s.failed[i] = m
	}
}

// decide returns the decision the state calls for, if any: abort on a
// failure or a timeout, run when every call passed.
func (s *state) decide(now time.Time, timeout time.Duration) (Decision, bool) {
	if s.bad != "" {
		return Decision{Reason: "the atomic batch's " + s.bad + "; no call of the batch was run. Send the calls again together"}, true
	}
	if len(s.failed) > 0 {
		idx := make([]int, 0, len(s.failed))
		for i := range s.failed {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		first := s.failed[idx[0]]
		for _, i := range idx { // the original failure, not a cascade
			if s.failed[i].Status != call.BatchAborted {
				first = s.failed[i]
				break
			}
		}
		why := fmt.Sprintf("call %s (%s) of this atomic batch ended %s", first.CallID, first.Tool, first.Status)
		if first.Error != "" {
			why += ": " + first.Error
		}
		return Decision{Reason: why + "; no call of the batch was run. Fix that call and send the calls again together"}, true
	}
	if len(s.passed) >= s.size {
		return Decision{Run: true}, true
	}
	var first time.Time
	for _, at := range s.passed {
		if !at.IsZero() && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	if !first.IsZero() && now.Sub(first) >= timeout {
		var missing []string
		for i := range s.size {
			if _, ok := s.passed[i]; !ok {
				missing = append(missing, call.ID(s.id, i))
			}
		}
		return Decision{Reason: fmt.Sprintf("%s of this atomic batch did not pass every gate within %v; no call of the batch was run", strings.Join(missing, ", "), timeout)}, true
	}
	return Decision{}, false
}
