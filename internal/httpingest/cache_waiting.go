package httpingest

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Waiting is one call of a response that toolgate said waits (the
// wire.Waiting notice on the response's progress subject) and that has no
// outcome yet: for "approval", until its expiry.
type Waiting struct {
	CallID string    `json:"call_id"`
	Tool   string    `json:"tool,omitempty"`
	For    string    `json:"for"`
	Since  time.Time `json:"since,omitzero"`
	Until  time.Time `json:"until,omitzero"`
}

// noticeMax bounds each text field of a notice kept: a notice with a
// longer one is not toolgate's and is dropped.
const noticeMax = 256

// waitBytes is what one kept notice counts against the cache's bytes.
func waitBytes(w Waiting) int { return len(w.CallID) + len(w.Tool) + len(w.For) + 64 }

// addNotice records one message published on a progress subject
// (toolgate.progress.<tenant>.<response-id>) under the results subject of
// the same response: a Waiting notice of a call of that response without an
// outcome yet. Stream progress events and anything else are ignored.
func (c *cache) addNotice(progressSubject string, data []byte) {
	rest, ok := strings.CutPrefix(progressSubject, wire.ProgressPrefix)
	if !ok || wire.NoticeKind(data) != wire.NoticeWaiting {
		return
	}
	var n wire.Waiting
	if json.Unmarshal(data, &n) != nil || n.For == "" || len(n.CallID) > noticeMax || len(n.Tool) > noticeMax || len(n.For) > noticeMax {
		return
	}
	rid := rest[strings.LastIndexByte(rest, '.')+1:]
	// A tenant's call ids carry its key before the response id (issue 28).
	if _, own := wire.SplitCallID(n.CallID); !strings.HasPrefix(own, rid+"-") {
		return // not a call of this response
	}
	subject := wire.ResultsPrefix + rest
	w := Waiting{CallID: n.CallID, Tool: n.Tool, For: n.For, Since: n.Since, Until: n.Until}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	el, ok := c.entries[subject]
	if !ok {
		el = c.order.PushBack(&entry{subject: subject, at: c.now(), calls: map[string]bool{}})
		c.entries[subject] = el
	}
	e := el.Value.(*entry)
	if e.calls[n.CallID] || e.response {
		return // its outcome is in
	}
	if e.waits == nil {
		e.waits = map[string]Waiting{}
	}
	_, had := e.waits[n.CallID]
	if !had && len(e.waits) >= c.maxEach {
		return
	}
	c.unwait(e, n.CallID)
	e.waits[n.CallID] = w // a later notice (a redelivery, a new approval) is the one that holds
	e.bytes += waitBytes(w)
	c.bytes += waitBytes(w)
	for c.order.Len() > 1 && (c.bytes > c.maxBytes || c.order.Len() > c.maxEntries) {
		c.remove(c.order.Front())
	}
}

// unwait drops callID's notice from e. Lock held.
func (c *cache) unwait(e *entry, callID string) {
	if w, ok := e.waits[callID]; ok {
		delete(e.waits, callID)
		e.bytes -= waitBytes(w)
		c.bytes -= waitBytes(w)
	}
}

// waiting lists e's waiting calls in call order. Lock held.
func (e *entry) waiting() []Waiting {
	out := make([]Waiting, 0, len(e.waits))
	for _, w := range e.waits {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Waiting) int {
		ia, _ := strconv.Atoi(a.CallID[strings.LastIndexByte(a.CallID, '-')+1:])
		ib, _ := strconv.Atoi(b.CallID[strings.LastIndexByte(b.CallID, '-')+1:])
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a.CallID, b.CallID)
	})
	return out
}
