package ingest

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// assemblyCache keeps the assemblies of open streams between reads, so each
// stored event is read and fed once, however many terminal events,
// duplicates or timers make the stream be looked at. It is only an
// optimisation: a stream missing from it (evicted, another replica's, a
// restart) is read again from its first event, and reaches the same
// decision. Bounded by entries and by the event bytes the assemblies keep.
type assemblyCache struct {
	mu sync.Mutex
	m  *lru[*asmEntry]
	// read counts the stream events read from TOOLGATE_IN (tests and
	// benchmarks look at it).
	read atomic.Int64
}

// asmEntry is one stream's assembly; mu is held while it is read and judged.
// settled: a caller holding this entry settled the stream; whoever waited
// for mu meanwhile has nothing left to do.
type asmEntry struct {
	mu      sync.Mutex
	asm     *assembly
	settled bool
}

// entry returns rid's entry, a new empty one when none is held.
func (c *assemblyCache) entry(rid string, maxSeq, budget int, who func(nats.Header, time.Time) sender) *asmEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = newLRU[*asmEntry](budget, assemblyCap)
	}
	if e, ok := c.m.get(rid); ok {
		return e
	}
	e := &asmEntry{asm: newAssembly(maxSeq, who)}
	c.m.put(rid, e, 0)
	return e
}

// resize records the bytes e keeps, if e is still rid's entry.
func (c *assemblyCache) resize(rid string, e *asmEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.m.get(rid); ok && cur == e {
		c.m.resize(rid, e.asm.kept)
	}
}

// forget drops rid's assembly: its stream settled. A settled entry of no
// size stays in its place, so a caller that looks rid up after the settle
// (another event or the timer, handled at the same time, before the
// responses-bucket mark is stored) finds it settled instead of starting a
// fresh assembly that would settle and publish the stream a second time.
func (c *assemblyCache) forget(rid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m != nil {
		c.m.put(rid, &asmEntry{settled: true}, 0)
	}
}

// settled reports whether this replica settled rid's stream (forget left
// its settled entry in place, and nothing evicted it since).
func (c *assemblyCache) settled(rid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		return false
	}
	e, ok := c.m.get(rid)
	return ok && e.asm == nil && e.settled // forget's entry; a live one's flag is e.mu's
}

// forget drops everything this replica holds for ref's stream.
func (a *Accumulate) forget(ref streamRef) {
	a.asm.forget(ref.key())
	a.prog.forget(ref.key())
}
