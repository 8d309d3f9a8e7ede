package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

const (
	anthropicStart = `{"type":"message_start","message":{"id":"m","model":"c"}}`
	anthropicStop  = `{"type":"message_stop"}`
)

// publishRaw publishes one stream event with a Toolgate-Seq header as given.
func publishRaw(t *testing.T, r *streamRig, rid, prov, seq, data string) {
	t.Helper()
	m := &nats.Msg{Subject: streams.InStream(rid), Data: []byte(data), Header: nats.Header{}}
	m.Header.Set(streams.HeaderProvider, prov)
	m.Header.Set(streams.HeaderResponseID, rid)
	m.Header.Set(streams.HeaderSeq, seq)
	if _, err := r.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

// oneResult waits for exactly one response-level result of rid.
func oneResult(t *testing.T, r *streamRig, rid string) resultMsg {
	t.Helper()
	r.finishedMark(t, rid)
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := len(r.resultsFor(rid)); n != 1 {
			return fmt.Errorf("%d results, want 1", n)
		}
		return nil
	})
	return r.resultsFor(rid)[0]
}

func TestAssemble_far_seq_keeps_one_missing_range_not_one_entry_per_seq(t *testing.T) {
	evs := []event{{seq: 1, data: []byte(anthropicStart)}, {seq: DefaultMaxStreamEvents, data: []byte(anthropicStop)}}
	asm := assemble(stored(provider.Anthropic, evs...), DefaultMaxStreamEvents)
	if got := fmt.Sprint(asm.missing()); got != "[2-9999]" || len(asm.bySeq) != 2 {
		t.Fatalf("missing %s, %d events kept; want [2-9999] and 2", got, len(asm.bySeq))
	}
	if why := asm.why(time.Minute); !strings.Contains(why, "missing Toolgate-Seq 2-9999") {
		t.Fatalf("why = %q", why)
	}
	h := nats.Header{}
	h.Set(streams.HeaderProvider, provider.Anthropic)
	h.Set(streams.HeaderSeq, "4611686018427387904")
	asm.add(eventOf(h, []byte(anthropicStop), 200, time.Now()))
	if asm.refused != 1 || len(asm.bySeq) != 2 || len(asm.missing()) != 1 {
		t.Fatalf("after a seq past the limit: refused %d, %d kept, missing %v", asm.refused, len(asm.bySeq), asm.missing())
	}
}

// TestStream_huge_toolgate_seq_is_refused_and_the_response_settles_without_it:
// seq 1, then a terminal event with Toolgate-Seq 2^62 (which made the gap
// bookkeeping allocate one entry per missing seq until the process ran out
// of memory). The event is dead-lettered on its own, and the response
// settles as it would without it: transport_incomplete after the idle
// timeout, saying that an event was refused.
func TestStream_huge_toolgate_seq_is_refused_and_the_response_settles_without_it(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	a := gate(r.js, 300*time.Millisecond)
	runAccumulate(t, r.js, a, nil)
	rid := "huge-seq"
	publishRaw(t, r, rid, provider.Anthropic, "1", anthropicStart)
	publishRaw(t, r, rid, provider.Anthropic, "4611686018427387904", anthropicStop)
	res := oneResult(t, r, rid)
	if res.Status != call.TransportIncomplete || len(res.Errors) == 0 ||
		!strings.Contains(res.Errors[0], "1 events with a Toolgate-Seq outside 1..10000 were refused") {
		t.Fatalf("result %+v, want transport_incomplete naming the refused event", res)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		dead := r.deadLetters(t, streams.DLQ(streams.Accumulate, CodeSeqOutOfRange))
		if len(dead) != 1 || string(dead[0]) != anthropicStop {
			return fmt.Errorf("%d dead letters %q, want the refused event", len(dead), dead)
		}
		return nil
	})
	r.settled(t)
}

// TestStream_more_stored_events_than_the_limit_is_rejected: a stream that
// stores more events than MaxStreamEvents (here copies of one seq, which
// JetStream keeps when they carry no message id) is rejected once, with a
// dead letter, and never re-read.
func TestStream_more_stored_events_than_the_limit_is_rejected(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	a := gate(r.js, time.Hour)
	a.MaxStreamEvents = 5
	runAccumulate(t, r.js, a, nil)
	rid := "too-many"
	for range 6 {
		publishRaw(t, r, rid, provider.Anthropic, "1", anthropicStart)
	}
	publishRaw(t, r, rid, provider.Anthropic, "2", anthropicStop)
	res := oneResult(t, r, rid)
	if res.Status != call.Rejected || len(res.Errors) == 0 || !strings.Contains(res.Errors[0], CodeTooManyEvents) {
		t.Fatalf("result %+v, want rejected %s", res, CodeTooManyEvents)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := len(r.deadLetters(t, streams.DLQ(streams.Accumulate, CodeTooManyEvents))); n != 1 {
			return fmt.Errorf("%d dead letters, want 1", n)
		}
		return nil
	})
	r.settled(t)
	if n := a.asm.read.Load(); n > 6 {
		t.Errorf("%d stream events read, want at most the limit and one more (6)", n)
	}
}

// TestStream_terminal_events_behind_a_gap_read_each_event_once: seq 1, then
// 2,000 terminal events behind a missing seq 2. Each terminal event used to
// read the whole stream again (about n²/2 events read, ~54 CPU-s); now each
// stored event is read exactly once, and another producer's valid stream,
// published in the middle of the attack, still reaches parse.
func TestStream_terminal_events_behind_a_gap_read_each_event_once(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	a := gate(r.js, 2*time.Second)
	runAccumulate(t, r.js, a, nil)
	const n = 2000
	rid := "gap-flood"
	publishRaw(t, r, rid, provider.Anthropic, "1", anthropicStart)
	valid := loadStreamFixture(t, provider.Anthropic, "claude-3-7-sonnet-tool-use.stream.sse")[0]
	for i := range n {
		publishRaw(t, r, rid, provider.Anthropic, fmt.Sprint(i+3), anthropicStop)
		if i == n/2 {
			publishEvents(t, r.js, "valid-beside-flood", valid.provider, inOrder(valid.events))
		}
	}
	r.finishedMark(t, "valid-beside-flood")
	res := oneResult(t, r, rid)
	if res.Status != call.TransportIncomplete || len(res.Errors) == 0 || !strings.Contains(res.Errors[0], "missing Toolgate-Seq 2") {
		t.Fatalf("result %+v, want transport_incomplete missing seq 2", res)
	}
	r.settled(t)
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if got := len(r.parsedFor("valid-beside-flood")); got < len(valid.want.Calls) {
			return fmt.Errorf("%d of %d valid calls reached parse", got, len(valid.want.Calls))
		}
		return nil
	})
	checkParsed(t, r.parsedFor("valid-beside-flood"), valid.want)
	stored := n + 1 + len(valid.events)
	// Each stored event once: a read picks up where the last one stopped.
	if got := a.asm.read.Load(); got != int64(stored) {
		t.Fatalf("%d stream events read for %d stored, want each read once", got, stored)
	}
}

// TestStream_poisoned_timer_is_dead_lettered_not_redelivered_forever: the
// timer consumer allows unlimited deliveries (MaxDeliver -1) so that an open
// stream's timer can bounce; a timer that can never be handled must still
// end, as a dead letter, after one delivery.
func TestStream_poisoned_timer_is_dead_lettered_not_redelivered_forever(t *testing.T) {
	r := newStreamRig(t, time.Second)
	runAccumulate(t, r.js, gate(r.js, time.Hour), nil)
	m := &nats.Msg{Subject: streams.TimerSubject(), Data: []byte("garbage"), Header: nats.Header{}}
	m.Header.Set(streams.HeaderResponseID, "not a response id!")
	if _, err := r.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := len(r.deadLetters(t, streams.DLQ(streams.Accumulate, "bad_timer"))); n != 1 {
			return fmt.Errorf("%d dead letters, want 1", n)
		}
		c, err := r.js.Consumer(context.Background(), streams.StreamGates, streams.AccumulateTimer)
		if err != nil {
			return err
		}
		info, err := c.Info(context.Background())
		if err != nil {
			return err
		}
		if info.NumPending != 0 || info.NumAckPending != 0 || info.NumRedelivered != 0 {
			return fmt.Errorf("timer consumer: %d pending, %d unacked, %d redelivered", info.NumPending, info.NumAckPending, info.NumRedelivered)
		}
		return nil
	})
}

// TestStream_event_with_an_oversized_header_is_refused_on_its_own: a stream
// event whose Toolgate-Tenant is 40 KB is dead-lettered (its headers cut) and
// left out: the terminal event it carried never counts, so the response is
// transport_incomplete instead of being judged with a 40 KB request context.
func TestStream_event_with_an_oversized_header_is_refused_on_its_own(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, 300*time.Millisecond), nil)
	rid := "big-header"
	publishRaw(t, r, rid, provider.Anthropic, "1", anthropicStart)
	m := &nats.Msg{Subject: streams.InStream(rid), Data: []byte(anthropicStop), Header: nats.Header{}}
	m.Header.Set(streams.HeaderProvider, provider.Anthropic)
	m.Header.Set(streams.HeaderSeq, "2")
	m.Header.Set(streams.HeaderTenant, strings.Repeat("t", 40<<10))
	if _, err := r.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	res := oneResult(t, r, rid)
	if res.Status != call.TransportIncomplete || len(res.Errors) == 0 || !strings.Contains(res.Errors[0], "1 events with a Toolgate-* header over 1024 bytes were refused") {
		t.Fatalf("result %+v, want transport_incomplete naming the refused event", res)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := len(r.deadLetters(t, streams.DLQ(streams.Accumulate, CodeHeaderTooLarge))); n != 1 {
			return fmt.Errorf("%d dead letters, want 1", n)
		}
		return nil
	})
}

// TestStream_undecodable_event_in_the_middle_rejects_the_response: an event
// the decoder refuses between a call's argument deltas used to be skipped,
// and the call assembled with part of its arguments missing went on to be
// parsed (and executed when the rest still parsed). Now the response is
// rejected as a whole with the event named, dead-lettered, and no call is
// sent on.
func TestStream_undecodable_event_in_the_middle_rejects_the_response(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	a := gate(r.js, time.Hour)
	runAccumulate(t, r.js, a, nil)
	rid := "undecodable-mid"
	evs := []string{
		anthropicStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"get_weather","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Par"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"is\", \"unit\":\"c\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`,
		anthropicStop,
	}
	for i, ev := range evs {
		if i == 3 {
			ev = `{"type":"content_block_delta","type":"content_block_delta"}` // a duplicate key: refused
		}
		publishRaw(t, r, rid, provider.Anthropic, fmt.Sprint(i+1), ev)
	}
	res := oneResult(t, r, rid)
	if res.Status != call.Rejected || len(res.Errors) == 0 || !strings.Contains(res.Errors[0], "Toolgate-Seq 4") {
		t.Fatalf("result %+v, want rejected naming event 4", res)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := len(r.deadLetters(t, streams.DLQ(streams.Accumulate, CodeUndecodableEvent))); n != 1 {
			return fmt.Errorf("%d dead letters, want 1", n)
		}
		return nil
	})
	r.settled(t)
	if got := r.parsedFor(rid); len(got) != 0 {
		t.Fatalf("%d envelopes reached parse, want none", len(got))
	}
}

// TestStream_a_settled_stream_is_not_settled_again_by_a_caller_that_came_late:
// the settle that finished a stream dropped its cache entry, so an event or
// timer handled at the same moment (before the responses-bucket mark was
// stored) started a fresh assembly and published the stream's outputs a
// second time; core subscribers of toolgate.results saw the result twice.
func TestStream_a_settled_stream_is_not_settled_again_by_a_caller_that_came_late(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	a := gate(r.js, time.Hour)
	rid := "late-caller"
	publishRaw(t, r, rid, provider.Anthropic, "1", anthropicStart)
	publishRaw(t, r, rid, provider.Anthropic, "2", anthropicStop)
	ctx := context.Background()
	first, wait, err := a.settle(ctx, streamRef{rid: rid}, false)
	if err != nil || wait != 0 || len(first) == 0 {
		t.Fatalf("first settle: %d outputs, wait %v, %v; want the stream settled", len(first), wait, err)
	}
	again, wait, err := a.settle(ctx, streamRef{rid: rid}, false)
	if err != nil || wait != 0 || len(again) != 0 {
		t.Fatalf("second settle: %d outputs, wait %v, %v; want nothing (already settled here)", len(again), wait, err)
	}
}

// TestStream_stream_refused_for_its_size_keeps_its_evidence: the too_large
// dead letter used to hold no bytes and no producer headers. Now it holds
// the producer's headers and the events read before the limit.
func TestStream_stream_refused_for_its_size_keeps_its_evidence(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	a := gate(r.js, time.Hour)
	a.MaxBody = 200
	runAccumulate(t, r.js, a, nil)
	rid := "too-big"
	publishRaw(t, r, rid, provider.Anthropic, "1", anthropicStart)
	publishRaw(t, r, rid, provider.Anthropic, "2", `{"type":"ping","pad":"`+strings.Repeat("x", 300)+`"}`)
	publishRaw(t, r, rid, provider.Anthropic, "3", anthropicStop)
	res := oneResult(t, r, rid)
	if res.Status != call.Rejected || len(res.Errors) == 0 || !strings.Contains(res.Errors[0], CodeStreamTooBig) {
		t.Fatalf("result %+v, want rejected %s", res, CodeStreamTooBig)
	}
	var msg *nats.Msg
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		ms := r.deadLetterMsgs(t, streams.DLQ(streams.Accumulate, CodeStreamTooBig))
		if len(ms) != 1 {
			return fmt.Errorf("%d dead letters, want 1", len(ms))
		}
		msg = ms[0]
		return nil
	})
	if msg.Header.Get(streams.HeaderProvider) != provider.Anthropic || !strings.Contains(string(msg.Data), "message_start") {
		t.Fatalf("dead letter headers %v, data %q: want the producer's headers and the events read", msg.Header, msg.Data)
	}
}
