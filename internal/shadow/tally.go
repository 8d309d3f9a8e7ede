package shadow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/whatif"
)

// FlushEvery is how often the policy stage writes its counts: at most one
// report update per tool compared in the interval, whatever the traffic.
const FlushEvery = time.Second

// flushTries bounds the compare-and-set rounds of one record (policy
// replicas write the same keys).
const flushTries = 5

// Tally holds the counts of one process not yet written, per tool, for the
// armed shadow; the memory is bounded by the shadow's tools and MaxChanges.
type Tally struct {
	mu     sync.Mutex
	shadow string
	delta  map[string]*Record
}

// reset forgets every count and counts for shadow id from now ("" none).
func (t *Tally) reset(id string) {
	t.mu.Lock()
	t.shadow, t.delta = id, nil
	t.mu.Unlock()
}

func (t *Tally) add(id, tool, callID string, was whatif.Fate, wasName string, would whatif.Fate, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id != t.shadow { // armed anew meanwhile
		return
	}
	if t.delta == nil {
		t.delta = map[string]*Record{}
	}
	r := t.delta[tool]
	if r == nil {
		r = &Record{Shadow: id, Tool: tool}
		t.delta[tool] = r
	}
	r.add(callID, was, would, wasName, why)
}

// take hands over the counts to write.
func (t *Tally) take() map[string]*Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.delta
	t.delta = nil
	return d
}

// giveBack returns counts that could not be written, for the next flush
// (dropped when another shadow was armed meanwhile).
func (t *Tally) giveBack(r *Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.Shadow != t.shadow {
		return
	}
	if t.delta == nil {
		t.delta = map[string]*Record{}
	}
	if cur := t.delta[r.Tool]; cur != nil {
		r.addAll(cur)
	}
	t.delta[r.Tool] = r
}

// Flush adds the counts held to the report bucket, a compare-and-set per
// tool; what it cannot write stays for the next flush.
func (t *Tally) Flush(ctx context.Context, reports jetstream.KeyValue) error {
	var errs []error
	for _, d := range t.take() {
		if err := mergeInto(ctx, reports, d); err != nil {
			t.giveBack(d)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// mergeInto adds d to the stored record of its tool; a record of another
// shadow is replaced.
func mergeInto(ctx context.Context, reports jetstream.KeyValue, d *Record) error {
	for try := 0; try < flushTries; try++ {
		cur := &Record{Shadow: d.Shadow, Tool: d.Tool}
		e, err := reports.Get(ctx, d.Tool)
		var rev uint64
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("shadow: report %s: %w", d.Tool, err)
		default:
			rev = e.Revision()
			var stored Record
			if json.Unmarshal(e.Value(), &stored) == nil && stored.Shadow == d.Shadow {
				cur = &stored
			}
		}
		cur.addAll(d)
		data, err := json.Marshal(cur)
		if err != nil {
			return fmt.Errorf("shadow: report %s: %w", d.Tool, err)
		}
		if rev == 0 {
			_, err = reports.Create(ctx, d.Tool, data)
		} else {
			_, err = reports.Update(ctx, d.Tool, data, rev)
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("shadow: report %s: %w", d.Tool, err)
		}
	}
	return fmt.Errorf("shadow: report %s: written by others %d times in a row; kept for the next flush", d.Tool, flushTries)
}

// Run writes the counts to the report bucket every FlushEvery (every, when
// positive) until ctx is done, then once more.
func (c *Comparer) Run(ctx context.Context, every time.Duration) {
	if !c.running.CompareAndSwap(false, true) {
		return // the validate, business and policy stages of one process share it
	}
	reports := c.reports
	if every <= 0 {
		every = FlushEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c.flush(fctx, reports, c.log)
			cancel()
			return
		case <-tick.C:
			c.flush(ctx, reports, c.log)
		}
	}
}

func (c *Comparer) flush(ctx context.Context, reports jetstream.KeyValue, log zerolog.Logger) {
	if err := c.Tally.Flush(ctx, reports); err != nil {
		log.Warn().Err(err).Msg("shadow report not written; the counts are kept for the next flush")
	}
}
