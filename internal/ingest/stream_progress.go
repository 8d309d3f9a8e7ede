package ingest

import (
	"encoding/json"
	"sync"

	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/provider"
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
// past it, or past the byte budget (ProgressBudget), the least recently
// used stream is forgotten.
const progressCap = 1024

// progressCache holds one progress accumulator per open stream. It is
// bounded by entries and by the event bytes fed to them, and a stream's
// entry goes when the stream settles on this replica (forget).
type progressCache struct {
	mu sync.Mutex
	m  *lru[*progressEntry]
}

type progressEntry struct {
	acc   *provider.Accumulator
	bytes int // event bytes fed to acc
}

// progress feeds ev to rid's progress accumulator, publishes a progress
// event (core NATS, best effort), and reports whether ev on its own is the
// provider's terminal event. The probe reads this one event with a fresh
// accumulator, so it holds however events were ordered or spread over
// replicas. A stream whose events outgrow the budget, or that shows more
// calls than Limits.MaxCalls, is no longer tracked.
func (a *Accumulate) progress(ref streamRef, prov string, ev storedEvent) (terminal bool) {
	rid, key := ref.rid, ref.key()
	probe, err := provider.NewAccumulator(prov, maxTokens(ev.header)...)
	if err != nil {
		return false
	}
	_ = probe.Add(ev.data)
	cap := maxTokens(ev.header)
	// MayEnd: one of two events that end a stream in either order
	// (Bedrock's messageStop and metadata); settling looks at the whole.
	terminal = probe.Done() || probe.MayEnd() || len(cap) > 0 && provider.EndsCappedStream(prov, ev.data)

	if a.asm.settled(key) {
		// Settled already (the timer, or another event, read the whole
		// stream first): a fresh accumulator fed the remaining events would
		// show a call with no name and a count from the middle.
		return terminal
	}
	p, tracked := a.prog.feed(key, prov, ev, a.progressBudget(), a.Limits.CheckCalls)
	if terminal {
		a.prog.forget(key)
	}
	if tracked && a.JS != nil {
		p.ResponseID = rid
		if data, err := json.Marshal(p); err == nil {
			_ = a.JS.Conn().Publish(streams.Progress(a.tenantOf(ref, ev.header), rid), data) // display only: a lost one costs nothing
		}
	}
	return terminal
}

// feed adds ev to rid's entry and returns the progress so far; tracked is
// false when the entry is not (or no longer) held.
func (c *progressCache) feed(rid, prov string, ev storedEvent, budget int, checkCalls func(int) *parse.Error) (p ProgressEvent, tracked bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = newLRU[*progressEntry](budget, progressCap)
	}
	e, ok := c.m.get(rid)
	if !ok {
		acc, err := provider.NewAccumulator(prov)
		if err != nil {
			return p, false
		}
		e = &progressEntry{acc: acc}
	}
	if e.bytes+len(ev.data) > budget {
		c.m.remove(rid) // too big to follow: its figures would be wrong from here on
		return p, false
	}
	_ = e.acc.Add(ev.data)
	e.bytes += len(ev.data)
	calls := e.acc.Progress()
	if checkCalls(len(calls)) != nil {
		c.m.remove(rid) // the response will be refused; listing its calls would cost per event
		return p, false
	}
	if !c.m.put(rid, e, e.bytes) {
		return p, false
	}
	p = ProgressEvent{ResponseID: rid, Seq: ev.seq, Calls: make([]ProgressCall, 0, len(calls))}
	for _, pc := range calls {
		p.Calls = append(p.Calls, ProgressCall{Index: pc.Index, Name: pc.Name, ArgumentBytes: pc.ArgumentBytes})
	}
	return p, true
}

// forget drops rid's entry: its stream settled.
func (c *progressCache) forget(rid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m != nil {
		c.m.remove(rid)
	}
}
