package gates

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/toolgate/toolgate/pkg/provider"
	"github.com/toolgate/toolgate/streams"
)

// ProgressEvent is what toolgate.progress.<response-id> carries while a
// stream is open: the calls seen so far, with their tool name once known and
// the argument bytes so far. It is for display only; nothing executes from
// it. Each replica counts only the events it handled, in arrival order, so
// with several replicas or reordered events the figures are approximate.
type ProgressEvent struct {
	ResponseID string         `json:"response_id"`
	Seq        int            `json:"seq"`
	Calls      []ProgressCall `json:"calls"`
}

// ProgressCall is one call in a ProgressEvent.
type ProgressCall struct {
	Index         int    `json:"index"`
	Name          string `json:"name,omitempty"`
	ArgumentBytes int    `json:"argument_bytes"`
}

// progressCap bounds how many open streams one replica tracks for progress;
// past it the least recently used stream is forgotten.
const progressCap = 1024

type progressCache struct {
	mu sync.Mutex
	m  map[string]*progressEntry
}

type progressEntry struct {
	acc  *provider.Accumulator
	used time.Time
}

// progress feeds ev to rid's progress accumulator, publishes a progress
// event (core NATS, best effort), and reports whether ev on its own is the
// provider's terminal event. The probe reads this one event with a fresh
// accumulator, so it holds however events were ordered or spread over
// replicas.
func (a *Accumulate) progress(rid, prov string, ev storedEvent) (terminal bool) {
	probe, err := provider.NewAccumulator(prov)
	if err != nil {
		return false
	}
	_ = probe.Add(ev.data)
	terminal = probe.Done()

	c := &a.prog
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*progressEntry{}
	}
	e := c.m[rid]
	if e == nil {
		if len(c.m) >= progressCap {
			c.evictOldest()
		}
		acc, _ := provider.NewAccumulator(prov)
		e = &progressEntry{acc: acc}
		c.m[rid] = e
	}
	e.used = time.Now()
	_ = e.acc.Add(ev.data)
	p := ProgressEvent{ResponseID: rid, Seq: ev.seq, Calls: []ProgressCall{}}
	for _, pc := range e.acc.Progress() {
		p.Calls = append(p.Calls, ProgressCall{Index: pc.Index, Name: pc.Name, ArgumentBytes: pc.ArgumentBytes})
	}
	if terminal {
		delete(c.m, rid)
	}
	c.mu.Unlock()

	if a.JS != nil {
		if data, err := json.Marshal(p); err == nil {
			_ = a.JS.Conn().Publish(streams.Progress(rid), data) // display only: a lost one costs nothing
		}
	}
	return terminal
}

// evictOldest forgets the least recently used stream. Lock held.
func (c *progressCache) evictOldest() {
	var oldest string
	var at time.Time
	for k, e := range c.m {
		if oldest == "" || e.used.Before(at) {
			oldest, at = k, e.used
		}
	}
	delete(c.m, oldest)
}
