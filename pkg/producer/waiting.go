package producer

import (
	"encoding/json"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/wire"
)

// maxWaitingPerResponse bounds the waiting notices a Watch keeps for one
// response: a response has at most that many calls in any toolgate whose
// limits are the defaults, and a notice more is dropped.
const maxWaitingPerResponse = 1024

// Waiting lists the calls of a watched response that toolgate said wait
// (wire.Waiting: for a human approval, until its expiry), in call order,
// leaving out those whose outcome Next has returned since. Notices are
// plain NATS messages sent when the wait starts, so a Watch sees only those
// published after it subscribed: watch a response before publishing it.
func (w *Watch) Waiting(responseID string) []wire.Waiting {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []wire.Waiting
	for id, n := range w.waits[responseID] {
		if !w.done[id] {
			out = append(out, n)
		}
	}
	sortWaiting(out)
	return out
}

// noticed keeps one Waiting notice of a watched response, under the
// response id of its subject; one that does not decode, names no call of
// that response, or comes after the call's outcome is dropped.
func (w *Watch) noticed(m *nats.Msg) {
	var n wire.Waiting
	if json.Unmarshal(m.Data, &n) != nil || n.CallID == "" {
		return
	}
	rid := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	// A tenant's call ids carry its key before the response id (issue 28).
	if _, own := wire.SplitCallID(n.CallID); !strings.HasPrefix(own, rid+"-") {
		return
	}
	n.ResponseID = rid
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done[n.CallID] {
		return
	}
	byCall := w.waits[rid]
	if byCall == nil {
		byCall = map[string]wire.Waiting{}
		w.waits[rid] = byCall
	}
	if _, ok := byCall[n.CallID]; ok || len(byCall) < maxWaitingPerResponse {
		byCall[n.CallID] = n // a later notice (a redelivery, a new approval) is the one that holds
	}
}

// ended records that Next returned callID's outcome: it waits no more.
func (w *Watch) ended(responseID, callID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done[callID] = true
	delete(w.waits[responseID], callID)
}

// sortWaiting orders notices by the index their call id ends with.
func sortWaiting(ns []wire.Waiting) {
	rs := make([]wire.Result, len(ns))
	byID := make(map[string]wire.Waiting, len(ns))
	for i, n := range ns {
		rs[i] = wire.Result{CallID: n.CallID}
		byID[n.CallID] = n
	}
	for i, r := range sorted(rs) {
		ns[i] = byID[r.CallID]
	}
}
