package httpingest

import (
	"container/list"
	"encoding/json"
	"sync"
	"time"

	"github.com/toolgate/toolgate/pkg/wire"
)

// cache holds the outcomes published on each results subject
// (toolgate.results.<tenant>.<response-id>) for Keep, bounded in bytes,
// responses and outcomes per response; the oldest response goes first. A
// call's outcome seen twice (a stage redelivered and published it again)
// is kept once.
type cache struct {
	keep                          time.Duration
	maxBytes, maxEntries, maxEach int
	now                           func() time.Time

	mu      sync.Mutex
	entries map[string]*list.Element // of *entry, oldest at the front
	order   *list.List
	bytes   int
	waiters map[string]*waiter
}

// waiter is the readers of one subject waiting for its next outcome: ch is
// closed when it comes.
type waiter struct {
	ch chan struct{}
	n  int
}

type entry struct {
	subject  string
	at       time.Time // first outcome
	outcomes []json.RawMessage
	calls    map[string]bool
	response bool // a response-level outcome came: nothing more will
	expected int  // how many calls the response proposed (response_calls); 0: not said
	dropped  int  // outcomes past maxEach
	bytes    int
	waits    map[string]Waiting // calls said to wait and without an outcome, by call id (cache_waiting.go)
}

// view is what a reader gets of one subject. Known: the subject has an
// entry (an outcome or a notice came, or this ingest took the response,
// within Keep); an unknown one is never published, not yet seen, expired,
// or another tenant's.
type view struct {
	Known    bool
	Outcomes []json.RawMessage
	Calls    int
	Expected int
	Response bool
	Dropped  int
	Waiting  []Waiting
}

// complete reports whether v holds every outcome: a response-level one, or
// as many call outcomes as the response proposed, or as the reader said
// to expect (calls > 0).
func (v view) complete(calls int) bool {
	return v.Response || (v.Expected > 0 && v.Calls >= v.Expected) || (calls > 0 && v.Calls >= calls)
}

func newCache(keep time.Duration, maxBytes, maxEntries, maxEach int) *cache {
	return &cache{keep: keep, maxBytes: maxBytes, maxEntries: maxEntries, maxEach: maxEach, now: time.Now,
		entries: map[string]*list.Element{}, order: list.New(), waiters: map[string]*waiter{}}
}

// add records one result message published on subject, a partition's
// (….<response-id>.p<k>) under its response's subject.
func (c *cache) add(subject string, data []byte) {
	var probe struct {
		CallID        string `json:"call_id"`
		ResponseCalls int    `json:"response_calls"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return // not a result: nothing a reader could use
	}
	subject = wire.ResultsResponse(subject) // a partition's result counts under its response's subject
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	el, ok := c.entries[subject]
	if !ok {
		el = c.order.PushBack(&entry{subject: subject, at: c.now(), calls: map[string]bool{}})
		c.entries[subject] = el
	}
	e := el.Value.(*entry)
	e.expected = max(e.expected, min(probe.ResponseCalls, c.maxEach))
	if probe.CallID != "" {
		c.unwait(e, probe.CallID) // it waits no more
	}
	switch {
	case probe.CallID != "" && e.calls[probe.CallID]:
		return
	case probe.CallID == "" && e.response:
		return
	case len(e.outcomes) >= c.maxEach:
		e.dropped++
	default:
		if probe.CallID != "" {
			e.calls[probe.CallID] = true
		} else {
			e.response = true
		}
		e.outcomes = append(e.outcomes, json.RawMessage(append([]byte(nil), data...)))
		e.bytes += len(data)
		c.bytes += len(data)
	}
	if w, ok := c.waiters[subject]; ok {
		close(w.ch)
		delete(c.waiters, subject)
	}
	for c.order.Len() > 1 && (c.bytes > c.maxBytes || c.order.Len() > c.maxEntries) {
		c.remove(c.order.Front())
	}
}

// mark makes subject known before any outcome of it came: this ingest took
// its response. It counts against MaxResponses and expires after Keep, as
// a response with outcomes does.
func (c *cache) mark(subject string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	if _, ok := c.entries[subject]; ok {
		return
	}
	c.entries[subject] = c.order.PushBack(&entry{subject: subject, at: c.now(), calls: map[string]bool{}})
	for c.order.Len() > 1 && (c.bytes > c.maxBytes || c.order.Len() > c.maxEntries) {
		c.remove(c.order.Front())
	}
}

// get returns subject's outcomes so far, and a waiter whose channel is
// closed at its next outcome; the caller releases it.
func (c *cache) get(subject string) (view, *waiter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	v := c.viewOf(subject)
	w, ok := c.waiters[subject]
	if !ok {
		w = &waiter{ch: make(chan struct{})}
		c.waiters[subject] = w
	}
	w.n++
	return v, w
}

// peek returns subject's outcomes so far.
func (c *cache) peek(subject string) view {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	return c.viewOf(subject)
}

// viewOf copies subject's outcomes. Lock held.
func (c *cache) viewOf(subject string) view {
	el, ok := c.entries[subject]
	if !ok {
		return view{}
	}
	e := el.Value.(*entry)
	return view{Known: true, Outcomes: append([]json.RawMessage(nil), e.outcomes...), Calls: len(e.calls), Expected: e.expected, Response: e.response, Dropped: e.dropped,
		Waiting: e.waiting()}
}

// release ends one reader's wait on w, dropping w when nobody waits on it
// any more, so polls that were never answered leave nothing behind.
func (c *cache) release(subject string, w *waiter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.n--
	if w.n == 0 && c.waiters[subject] == w {
		delete(c.waiters, subject)
	}
}

// expire drops responses older than keep. Lock held.
func (c *cache) expire() {
	cut := c.now().Add(-c.keep)
	for f := c.order.Front(); f != nil && f.Value.(*entry).at.Before(cut); f = c.order.Front() {
		c.remove(f)
	}
}

// remove drops one response. Lock held.
func (c *cache) remove(el *list.Element) {
	e := el.Value.(*entry)
	c.order.Remove(el)
	delete(c.entries, e.subject)
	c.bytes -= e.bytes
}
