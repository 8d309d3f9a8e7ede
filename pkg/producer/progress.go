package producer

import (
	"encoding/json"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Progress is the latest progress event toolgate published for a streamed
// response while it was open (toolgate.progress.<tenant>.<response-id>):
// the highest event seq it had read and the calls seen so far. It is for
// display only, best effort (a lost one costs nothing), and figures are
// approximate with several accumulate replicas.
type Progress struct {
	ResponseID string         `json:"response_id"`
	Seq        int            `json:"seq"`
	Calls      []ProgressCall `json:"calls"`
}

// ProgressCall is one call of a Progress: its tool name once known, and its
// argument bytes so far.
type ProgressCall struct {
	Index         int    `json:"index"`
	Name          string `json:"name,omitempty"`
	ArgumentBytes int    `json:"argument_bytes"`
}

// Progress returns the latest progress event of a watched stream, and
// whether any came: toolgate has read that stream's events and holds it open
// until its terminal event, a Toolgate-End, or its idle timeout.
func (w *Watch) Progress(responseID string) (Progress, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.prog[responseID]
	return p, ok
}

// progressed keeps the highest-seq progress event of each watched response,
// under the response id of its subject; one that does not decode is dropped
// (display only). A notice (wire.NoticeKind) is not a progress event: a
// Waiting one is kept (noticed), any other kind ignored.
func (w *Watch) progressed(m *nats.Msg) {
	if k := wire.NoticeKind(m.Data); k != "" {
		if k == wire.NoticeWaiting {
			w.noticed(m)
		}
		return // a notice of a kind this client does not know
	}
	var p Progress
	if json.Unmarshal(m.Data, &p) != nil {
		return
	}
	rid := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	p.ResponseID = rid
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.prog[rid]; !ok || p.Seq >= old.Seq {
		w.prog[rid] = p
	}
}
