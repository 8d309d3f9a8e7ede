package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// parallelChat is a two-call openai-chat stream used by the failure tests.
func parallelChat(t *testing.T) streamFixture {
	t.Helper()
	f := loadStreamFixture(t, provider.OpenAIChat, "openai-gpt-4o-parallel-tool-calls.stream.sse")[0]
	if len(f.want.Calls) < 2 {
		t.Fatalf("fixture has %d calls, want a parallel call", len(f.want.Calls))
	}
	return f
}

// waitIncomplete waits for one transport_incomplete result per call of
// want, and checks that nothing reached parse and that each dead letter
// keeps the raw arguments that did arrive.
func waitIncomplete(t *testing.T, r *streamRig, rid string, calls int, because string) []call.Envelope {
	t.Helper()
	r.finishedMark(t, rid)
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := len(r.resultsFor(rid)); n != calls {
			return fmt.Errorf("%d results, want %d", n, calls)
		}
		return nil
	})
	r.settled(t)
	for _, res := range r.resultsFor(rid) {
		if res.Status != call.TransportIncomplete {
			t.Errorf("call %s (%s): %s, want transport_incomplete", res.CallID, res.Tool, res.Status)
		}
		if len(res.Errors) == 0 || !strings.Contains(res.Errors[0], because) {
			t.Errorf("call %s errors %q, want a reason containing %q", res.CallID, res.Errors, because)
		}
	}
	if got := r.parsedFor(rid); len(got) != 0 {
		t.Errorf("%d calls of an unfinished stream reached parse", len(got))
	}
	var dead []call.Envelope
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		dead = dead[:0]
		for _, b := range r.deadLetters(t, streams.DLQ(streams.Accumulate, string(call.TransportIncomplete))) {
			if e, err := call.Unmarshal(b); err == nil && e.ResponseID == rid {
				dead = append(dead, e)
			}
		}
		if len(dead) != calls {
			return fmt.Errorf("%d dead letters, want %d", len(dead), calls)
		}
		return nil
	})
	return dead
}

// TestStream_gap_with_terminal_event_is_transport_incomplete_after_idle: an
// argument chunk never arrives though the terminal event does; the calls are
// never parsed, and once the idle timeout passed they are
// transport_incomplete, with the arguments that did arrive kept.
func TestStream_gap_with_terminal_event_is_transport_incomplete_after_idle(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, 500*time.Millisecond), nil)
	f := parallelChat(t)
	evs := inOrder(f.events)
	// Lose an argument chunk: every call keeps its name, one its full text.
	lost := -1
	for i := len(evs) / 2; i < len(evs)-1 && lost < 0; i++ {
		a, _ := provider.NewAccumulator(f.provider)
		for j, ev := range f.events {
			if j != i {
				_ = a.Add(ev)
			}
		}
		names := 0
		for _, c := range a.Response().Calls {
			if c.Name != "" {
				names++
			}
		}
		if names == len(f.want.Calls) && fmt.Sprint(a.Response().Calls) != fmt.Sprint(f.want.Calls) {
			lost = i
		}
	}
	if lost < 0 {
		t.Fatal("no argument-only chunk in the fixture")
	}
	evs = append(evs[:lost:lost], evs[lost+1:]...)
	rid := ridOf("gap", f.name)
	publishEvents(t, r.js, rid, f.provider, evs)
	dead := waitIncomplete(t, r, rid, len(f.want.Calls), fmt.Sprintf("missing Toolgate-Seq %d", lost+1))
	for _, e := range dead {
		if e.ToolName == "" || e.RawArguments == "" {
			t.Errorf("dead letter %s keeps tool %q arguments %q, want what arrived", e.CallID, e.ToolName, e.RawArguments)
		}
	}
}

// TestStream_toolgate_end_mid_stream_is_transport_incomplete_at_once: the
// producer's Toolgate-End settles the stream without waiting for the idle
// timeout (an hour here).
func TestStream_toolgate_end_mid_stream_is_transport_incomplete_at_once(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, time.Hour), nil)
	f := parallelChat(t)
	evs := inOrder(f.events)
	// Cut after the second call started, so both calls exist.
	cut := 0
	for i := range f.events {
		a, _ := provider.NewAccumulator(f.provider)
		for _, ev := range f.events[:i+1] {
			_ = a.Add(ev)
		}
		if len(a.Progress()) == 2 {
			cut = i + 2
			break
		}
	}
	if cut == 0 || cut >= len(evs)-1 {
		t.Fatalf("cannot cut the fixture mid-stream (cut %d of %d)", cut, len(evs))
	}
	rid := ridOf("end", f.name)
	evs = append(evs[:cut:cut], event{isEnd: true, end: "upstream connection reset"})
	publishEvents(t, r.js, rid, f.provider, evs)
	waitIncomplete(t, r, rid, 2, "upstream connection reset")
}

// TestStream_toolgate_end_before_any_call_is_a_response_result: no call had
// started, so the response as a whole is transport_incomplete.
func TestStream_toolgate_end_before_any_call_is_a_response_result(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, time.Hour), nil)
	rid := "end-before-calls"
	publishEvents(t, r.js, rid, provider.Anthropic, []event{{isEnd: true, end: "client went away"}})
	r.finishedMark(t, rid)
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		res := r.resultsFor(rid)
		if len(res) != 1 || res[0].Status != call.TransportIncomplete || res[0].CallID != "" {
			return fmt.Errorf("results %+v, want one response-level transport_incomplete", res)
		}
		return nil
	})
}

// TestStream_producer_dying_silently_is_transport_incomplete_after_idle: no
// terminal event and no Toolgate-End; the idle timer settles the stream.
func TestStream_producer_dying_silently_is_transport_incomplete_after_idle(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, 500*time.Millisecond), nil)
	f := parallelChat(t)
	evs := inOrder(f.events)
	rid := ridOf("silent", f.name)
	publishEvents(t, r.js, rid, f.provider, evs[:len(evs)-3])
	start := time.Now()
	waitIncomplete(t, r, rid, len(f.want.Calls), "no terminal event within the 500ms idle timeout")
	if time.Since(start) < 400*time.Millisecond {
		t.Errorf("settled after %v, before the idle timeout", time.Since(start))
	}
}

// TestStream_replica_killed_holding_the_terminal_event_loses_and_duplicates_nothing:
// replica A handles a stream and loses its connection while handling the
// terminal event; replica B on the same durables finishes the response:
// every call reaches parse exactly once.
func TestStream_replica_killed_holding_the_terminal_event_loses_and_duplicates_nothing(t *testing.T) {
	r := newStreamRig(t, time.Second) // AckWait: when A's unacked events go to B
	ncA, jsA := testenv.Connect(t, r.srv)
	f := loadStreamFixture(t, provider.Anthropic, "claude-3-7-sonnet-tool-use.stream.sse")[0]
	rid := ridOf("replica", f.name)
	terminal := len(f.events) // message_stop is the last event
	// A's idle timer never fires: A cannot finish the response from what the
	// stream holds before it dies, so only B's takeover can.
	a := gate(jsA, time.Hour)
	var killed, handled atomic.Int32
	runAccumulate(t, jsA, a, func(ctx context.Context, m worker.Msg) ([]worker.Output, error) {
		if m.Header.Get(streams.HeaderSeq) == fmt.Sprint(terminal) {
			ncA.Close() // dies mid-handling: nothing published, nothing acked
			killed.Add(1)
			return nil, errors.New("replica A killed")
		}
		handled.Add(1)
		return a.Handle(ctx, m)
	})
	publishEvents(t, r.js, rid, f.provider, inOrder(f.events))
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if killed.Load() == 0 {
			return errors.New("replica A has not reached the terminal event")
		}
		return nil
	})
	// Under load A may finish the response before it dies, from an
	// earlier event's read-back of what the stream stores (the terminal
	// event is stored before any replica handles it); then no takeover is
	// needed, and the promise below (each call reaches parse once) holds.
	early := len(r.parsedFor(rid))
	_, jsB := testenv.Connect(t, r.srv)
	b := gate(jsB, 500*time.Millisecond)
	var bTerminal atomic.Int32
	runAccumulate(t, jsB, b, func(ctx context.Context, m worker.Msg) ([]worker.Output, error) {
		if m.Header.Get(streams.HeaderSeq) == fmt.Sprint(terminal) {
			bTerminal.Add(1)
		}
		return b.Handle(ctx, m)
	})
	r.finishedMark(t, rid)
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := len(r.parsedFor(rid)); n < len(f.want.Calls) {
			return fmt.Errorf("%d of %d calls reached parse", n, len(f.want.Calls))
		}
		return nil
	})
	r.settled(t)
	checkParsed(t, r.parsedFor(rid), f.want)
	if handled.Load() == 0 {
		t.Error("replica A handled no event before it died")
	}
	if early == 0 && bTerminal.Load() == 0 {
		t.Error("replica B never handled the terminal event A died holding: no takeover")
	}
}
