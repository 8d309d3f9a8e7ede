package gates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/call"
	"github.com/toolgate/toolgate/pkg/pipeline"
	"github.com/toolgate/toolgate/streams"
)

// BatchKV keeps batch marks and decisions in the toolgate_batches bucket.
type BatchKV struct {
	KV  jetstream.KeyValue
	Now Clock
}

// Tools implements Batches.
func (k *BatchKV) Tools(ctx context.Context, b call.Batch) (map[int]string, error) {
	out := map[int]string{}
	for i := range b.Size {
		e, err := k.KV.Get(ctx, streams.BatchKey(b.ID, "tool", i))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("gates: batch %s: %w", b.ID, err)
		}
		out[i] = string(e.Value())
	}
	return out, nil
}

// Await implements Batches.
func (k *BatchKV) Await(ctx context.Context, b call.Batch, callID string, wait, timeout time.Duration) (Decision, bool, error) {
	if d, ok, err := k.decision(ctx, b.ID); err != nil || ok {
		return d, ok, err
	}
	mark, _ := json.Marshal(pipeline.PassMark{CallID: callID, At: k.Now().UTC()})
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
	st := batchState{id: b.ID, size: b.Size, passed: map[int]time.Time{}, failed: map[int]pipeline.FailMark{}}
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
func (k *BatchKV) settle(ctx context.Context, id string, st *batchState, timeout time.Duration) (Decision, bool, error) {
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
func (k *BatchKV) decide(ctx context.Context, id string, d Decision) (Decision, bool, error) {
	d.At = k.Now().UTC()
	data, _ := json.Marshal(d)
	if _, err := k.KV.Create(ctx, streams.BatchDecisionKey(id), data); err == nil {
		return d, true, nil
	} else if !errors.Is(err, jetstream.ErrKeyExists) {
		return Decision{}, false, fmt.Errorf("gates: batch %s: decide: %w", id, err)
	}
	return k.decision(ctx, id)
}

func (k *BatchKV) decision(ctx context.Context, id string) (Decision, bool, error) {
	e, err := k.KV.Get(ctx, streams.BatchDecisionKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Decision{}, false, nil
	}
	if err != nil {
		return Decision{}, false, fmt.Errorf("gates: batch %s: %w", id, err)
	}
	var d Decision
	if err := json.Unmarshal(e.Value(), &d); err != nil {
		return Decision{}, false, fmt.Errorf("gates: batch %s: decision: %w", id, err)
	}
	return d, true, nil
}

// batchState is what a waiting call knows of its batch.
type batchState struct {
	id       string
	size     int
	passed   map[int]time.Time
	failed   map[int]pipeline.FailMark
	decision *Decision
}

func (s *batchState) add(en jetstream.KeyValueEntry) {
	if en.Operation() != jetstream.KeyValuePut {
		return
	}
	parts := strings.Split(en.Key(), ".")
	if len(parts) == 2 && parts[1] == "decision" {
		var d Decision
		if json.Unmarshal(en.Value(), &d) == nil {
			s.decision = &d
		}
		return
	}
	if len(parts) != 3 {
		return
	}
	i, err := strconv.Atoi(parts[2])
	if err != nil {
		return
	}
	switch parts[1] {
	case "passed":
		var m pipeline.PassMark
		_ = json.Unmarshal(en.Value(), &m)
		s.passed[i] = m.At
	case "failed":
		var m pipeline.FailMark
		_ = json.Unmarshal(en.Value(), &m)
		s.failed[i] = m
	}
}

// decide returns the decision the state calls for, if any: abort on a
// failure or a timeout, run when every call passed.
func (s *batchState) decide(now time.Time, timeout time.Duration) (Decision, bool) {
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
