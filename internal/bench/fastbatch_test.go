package bench

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Fast batch operations (nats-server 2.14, ADR-50 "fast ingest"): the last
// tokens of a message's reply subject,
// <inbox>.<batch id>.<flow>.<gap mode>.<batch seq>.<op>.$FI
// (server/stream.go, getFastBatch).
const (
	fbStart     = 0 // the first message of a batch
	fbAppend    = 1
	fbCommit    = 2 // a message that also ends the batch: its PubAck covers the batch
	fbCommitEOB = 3 // ends the batch without a message
	fbPing      = 4 // asks for the last flow ack again
)

// fbReply is the reply subject of a fast batch message.
func fbReply(inbox, batch string, flow int, seq uint64, op int) string {
	return inbox + "." + batch + "." + strconv.Itoa(flow) + ".fail." + strconv.FormatUint(seq, 10) + "." + strconv.Itoa(op) + ".$FI"
}

// fbResponse is any answer on a batch's reply subject: a flow ack
// {"type":"ack","seq":S,"msgs":M} (every message up to S stored), a gap
// {"type":"gap"}, an error {"type":"err","seq":S,"error":...}, or, without
// a type, the PubAck that ends the batch ({"stream","seq","batch","count"},
// or with "error").
type fbResponse struct {
	Type      string   `json:"type"`
	Seq       uint64   `json:"seq"`
	Msgs      int      `json:"msgs"`
	LastSeq   uint64   `json:"last_seq"`
	Stream    string   `json:"stream"`
	Batch     string   `json:"batch"`
	Count     uint64   `json:"count"`
	Duplicate bool     `json:"duplicate"`
	Error     *fbError `json:"error"`
}

type fbError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

// fastHop is the minimal fast batch publisher a worker's hop would need
// (hand-rolled: orbit.go's FastPublisher is one batch whose first Add waits
// a round trip and whose commit blocks until the PubAck, so a pipelined
// worker cannot use it as is). One long-lived publisher per target stream:
// a batch runs while inputs keep coming and its last message commits it
// when none is waiting; each input is acked once a flow ack or the
// batch's PubAck covers its output's batch sequence.
type fastHop struct {
	nc    *nats.Conn
	inbox string
	id    string
	flow  int
	sub   *nats.Subscription
	acked func(jetstream.Msg) // an input whose output is known stored

	mu      sync.Mutex
	batch   uint64 // the current batch's number (its id is id-batch)
	seq     uint64 // the last sequence sent in it
	pending []fbPending
	st      fbStats
	err     error // the first failure (a gap, an error, a refused batch)
}

// fbStats counts a fast batch publisher's traffic.
type fbStats struct {
	Sent     int64 // outputs published
	Batches  int64 // batches committed
	FlowAcks int64 // flow acks received
	Replies  int64 // every answer: flow acks, PubAcks, errors
}

func (a fbStats) plus(b fbStats) fbStats {
	return fbStats{a.Sent + b.Sent, a.Batches + b.Batches, a.FlowAcks + b.FlowAcks, a.Replies + b.Replies}
}

type fbPending struct {
	in    jetstream.Msg
	batch uint64
	seq   uint64
}

func newFastHop(nc *nats.Conn, flow int, acked func(jetstream.Msg)) (*fastHop, error) {
	f := &fastHop{nc: nc, inbox: nats.NewInbox(), id: strings.TrimPrefix(nats.NewInbox(), nats.InboxPrefix), flow: flow, acked: acked}
	sub, err := nc.Subscribe(f.inbox+".>", f.response)
	if err != nil {
		return nil, err
	}
	f.sub = sub
	return f, nil
}

// send publishes in's output; last commits the batch with it.
func (f *fastHop) send(in jetstream.Msg, out *nats.Msg, last bool) error {
	f.mu.Lock()
	f.seq++
	op := fbAppend
	switch {
	case last:
		op = fbCommit // at seq 1 a batch of one: the server sends only the PubAck
	case f.seq == 1:
		op = fbStart
	}
	f.pending = append(f.pending, fbPending{in: in, batch: f.batch, seq: f.seq})
	out.Reply = fbReply(f.inbox, f.id+"-"+strconv.FormatUint(f.batch, 10), f.flow, f.seq, op)
	f.st.Sent++
	if last {
		f.batch++
		f.seq = 0
		f.st.Batches++
	}
	f.mu.Unlock()
	return f.nc.PublishMsg(out)
}

// response settles the inputs a flow ack or PubAck covers.
func (f *fastHop) response(m *nats.Msg) {
	f.mu.Lock()
	f.st.Replies++
	f.mu.Unlock()
	var r fbResponse
	if err := json.Unmarshal(m.Data, &r); err != nil {
		f.fail(fmt.Errorf("fast batch: %q: %w", m.Data, err))
		return
	}
	tokens := strings.Split(m.Subject, ".")
	if len(tokens) < 6 {
		f.fail(fmt.Errorf("fast batch: reply %q", m.Subject))
		return
	}
	id := tokens[len(tokens)-6]
	batch, err := strconv.ParseUint(id[strings.LastIndexByte(id, '-')+1:], 10, 64)
	if err != nil {
		f.fail(fmt.Errorf("fast batch: reply %q: %w", m.Subject, err))
		return
	}
	switch {
	case r.Type == "ack":
		f.mu.Lock()
		f.st.FlowAcks++
		f.mu.Unlock()
		f.stored(batch, r.Seq)
	case r.Type == "" && r.Error == nil:
		f.stored(batch, r.Count)
	default:
		f.fail(fmt.Errorf("fast batch %d: %s", batch, m.Data))
	}
}

// stored acks every input whose output is at or before seq of batch
// (earlier batches are covered: one stream stores in order).
func (f *fastHop) stored(batch, seq uint64) {
	f.mu.Lock()
	k := 0
	for k < len(f.pending) && (f.pending[k].batch < batch || f.pending[k].batch == batch && f.pending[k].seq <= seq) {
		k++
	}
	done := append([]fbPending(nil), f.pending[:k]...)
	f.pending = f.pending[k:]
	f.mu.Unlock()
	for _, p := range done {
		f.acked(p.in)
	}
}

func (f *fastHop) fail(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

func (f *fastHop) stats() (fbStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st, f.err
}
