package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// streamRig is an embedded JetStream with toolgate's declared topology, a
// collector standing in for the parse stage, and a subscription on every
// result.
type streamRig struct {
	srv *server.Server
	nc  *nats.Conn
	js  jetstream.JetStream

	mu      sync.Mutex
	parsed  map[string][]call.Envelope // by response id, as delivered to parse
	results map[string][]resultMsg     // by response id
	// swap replaces the gate claimedRig's accumulate runs (a fix).
	swap func(*Accumulate)
}

// resultMsg is the part of a result message (a call's or a response's) the
// tests look at.
type resultMsg struct {
	CallID string      `json:"call_id"`
	Tool   string      `json:"tool"`
	Status call.Status `json:"status"`
	Errors []string    `json:"errors"`
}

func newStreamRig(t *testing.T, ackWait time.Duration) *streamRig {
	t.Helper()
	return newStreamRigWith(t, func(s *streams.Settings) { s.AckWait = ackWait })
}

// newStreamRigWith is newStreamRig with the topology's settings adjusted.
func newStreamRigWith(t *testing.T, adjust func(*streams.Settings)) *streamRig {
	t.Helper()
	r := &streamRig{srv: testenv.RunJetStream(t), parsed: map[string][]call.Envelope{}, results: map[string][]resultMsg{}}
	r.nc, r.js = testenv.Connect(t, r.srv)
	set := streams.DefaultSettings()
	set.Storage = jetstream.MemoryStorage
	adjust(&set)
	ctx := context.Background()
	if err := streams.Ensure(ctx, r.js, set); err != nil {
		t.Fatal(err)
	}
	// The test is the parse stage: it takes every envelope off the parse
	// durable and keeps it, so duplicates would show.
	cons, err := r.js.Consumer(ctx, streams.StreamGates, streams.Parse)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		e, err := call.Unmarshal(m.Data())
		if err != nil {
			t.Errorf("parse input: %v", err)
		}
		r.mu.Lock()
		r.parsed[e.ResponseID] = append(r.parsed[e.ResponseID], e)
		r.mu.Unlock()
		_ = m.Ack()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	// Results as stored (a core subscription would also see publishes that
	// JetStream dropped as duplicates of a message id).
	rc, err := r.js.OrderedConsumer(ctx, streams.StreamResults, jetstream.OrderedConsumerConfig{FilterSubjects: []string{streams.ResultsAll()}})
	if err != nil {
		t.Fatal(err)
	}
	rcc, err := rc.Consume(func(m jetstream.Msg) {
		var res resultMsg
		if err := json.Unmarshal(m.Data(), &res); err != nil {
			t.Errorf("result: %v", err)
		}
		rid := m.Headers().Get(streams.HeaderResponseID)
		r.mu.Lock()
		r.results[rid] = append(r.results[rid], res)
		r.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rcc.Stop)
	if err := r.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *streamRig) parsedFor(rid string) []call.Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call.Envelope(nil), r.parsed[rid]...)
}

func (r *streamRig) resultsFor(rid string) []resultMsg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]resultMsg(nil), r.results[rid]...)
}

// gate returns an accumulate gate over js with test timeouts.
func gate(js jetstream.JetStream, idle time.Duration) *Accumulate {
	return &Accumulate{
		Limits: parse.DefaultLimits(), Now: time.Now, JS: js,
		IdleTimeout: idle, GapRecheck: 50 * time.Millisecond,
	}
}

// runAccumulate runs the accumulate stage as the lead's stage runner does:
// the accumulate durable on a.Handle and the accumulate_timer durable on
// a.HandleTimer. h, when not nil, wraps a.Handle.
func runAccumulate(t *testing.T, js jetstream.JetStream, a *Accumulate, h worker.Handler) (cancel func()) {
	t.Helper()
	if h == nil {
		h = a.Handle
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, w := range []struct {
		stage, stream string
		h             worker.Handler
	}{
		{streams.Accumulate, streams.StreamIn, h},
		{streams.AccumulateTimer, streams.StreamGates, a.HandleTimer},
	} {
		wk, err := worker.New(js, worker.Config{
			Stage: w.stage, Stream: w.stream, Batch: 10,
			DeadLetter: a.Emit.DeadLetter(streams.Accumulate, time.Now),
		}, w.h)
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = wk.Run(ctx) }()
		testenv.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
			if !wk.Ready() {
				return errors.New(w.stage + " not consuming")
			}
			return nil
		})
	}
	return cancel
}

// event is one stream message a test publishes.
type event struct {
	seq   int
	data  []byte
	msgID bool // send Nats-Msg-Id <rid>:<seq> as a producer does
	end   string
	isEnd bool
}

func publishEvents(t *testing.T, js jetstream.JetStream, rid, prov string, evs []event) {
	t.Helper()
	for _, ev := range evs {
		m := &nats.Msg{Subject: streams.InStream(rid), Data: ev.data, Header: nats.Header{}}
		m.Header.Set(streams.HeaderProvider, prov)
		m.Header.Set(streams.HeaderResponseID, rid)
		if ev.seq > 0 {
			m.Header.Set(streams.HeaderSeq, strconv.Itoa(ev.seq))
		}
		if ev.msgID {
			m.Header.Set(nats.MsgIdHdr, fmt.Sprintf("%s:%d", rid, ev.seq))
		}
		if ev.isEnd {
			m.Header.Set(streams.HeaderEnd, ev.end)
		}
		if _, err := js.PublishMsg(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// inOrder numbers events 1..n as a producer does.
func inOrder(events [][]byte) []event {
	out := make([]event, len(events))
	for i, d := range events {
		out[i] = event{seq: i + 1, data: d, msgID: true}
	}
	return out
}

// finishedMark waits for rid's mark in the responses bucket.
func (r *streamRig) finishedMark(t *testing.T, rid string) {
	t.Helper()
	kv, err := r.js.KeyValue(context.Background(), streams.BucketResponses)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		_, err := kv.Get(context.Background(), rid)
		return err
	})
}

// settled waits until the accumulate durable has nothing pending, so no
// late output can still come. The deadline is generous: a test that floods thousands of events runs in
// about 2 s alone, but `make test` runs two packages at once on two cores.
func (r *streamRig) settled(t *testing.T) {
	t.Helper()
	testenv.Eventually(t, 45*time.Second, 10*time.Millisecond, func() error {
		return testenv.ConsumerIdle(context.Background(), r.js, streams.StreamIn, streams.Accumulate)
	})
}

// deadLetters returns the bodies stored on a dead-letter subject.
func (r *streamRig) deadLetters(t *testing.T, subject string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, m := range r.deadLetterMsgs(t, subject) {
		out = append(out, m.Data)
	}
	return out
}

// deadLetterMsgs returns the dead letters stored on subject, headers and all.
func (r *streamRig) deadLetterMsgs(t *testing.T, subject string) []*nats.Msg {
	t.Helper()
	ctx := context.Background()
	cons, err := r.js.OrderedConsumer(ctx, streams.StreamDLQ, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	var out []*nats.Msg
	for {
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			out = append(out, &nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()})
			n++
		}
		if n == 0 {
			return out
		}
	}
}
