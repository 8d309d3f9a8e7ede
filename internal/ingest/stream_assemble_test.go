package ingest

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/streams"
)

func stored(prov string, evs ...event) []storedEvent {
	var out []storedEvent
	t0 := time.Unix(1_700_000_000, 0)
	for i, ev := range evs {
		h := nats.Header{}
		h.Set(streams.HeaderProvider, prov)
		if ev.seq > 0 {
			h.Set(streams.HeaderSeq, strconv.Itoa(ev.seq))
		}
		if ev.isEnd {
			h.Set(streams.HeaderEnd, ev.end)
		}
		out = append(out, eventOf(h, ev.data, uint64(100+i), t0.Add(time.Duration(i)*time.Second)))
	}
	return out
}

func TestAssemble_orders_drops_duplicates_and_finds_gaps(t *testing.T) {
	const (
		start = `{"type":"message_start","message":{"id":"m","model":"c"}}`
		block = `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"get_weather","input":{}}}`
		d1    = `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`
		d2    = `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"Oslo\"}"}}`
		stop  = `{"type":"content_block_stop","index":0}`
		mdel  = `{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`
		mstop = `{"type":"message_stop"}`
	)
	ev := func(seq int, data string) event { return event{seq: seq, data: []byte(data)} }
	all := []event{ev(1, start), ev(2, block), ev(3, d1), ev(4, d2), ev(5, stop), ev(6, mdel), ev(7, mstop)}
	for _, test := range []struct {
		name       string
		events     []event
		done       bool
		missing    string
		ended      bool
		args       string
		unnumbered int
	}{
		{name: "in order", events: all, done: true, missing: "[]", args: `{"city":"Oslo"}`},
		{name: "reversed with duplicates", events: []event{all[6], all[5], all[4], all[3], all[3], all[2], all[1], all[0], all[2]}, done: true, missing: "[]", args: `{"city":"Oslo"}`},
		{name: "argument chunk lost", events: []event{all[0], all[1], all[2], all[4], all[5], all[6]}, missing: "[4]", args: `{"city":`},
		{name: "cut, then the producer's end", events: []event{all[0], all[1], all[2], {isEnd: true, end: "reset"}}, missing: "[]", ended: true, args: `{"city":`},
		{name: "unnumbered event ignored", events: []event{all[0], all[1], {data: []byte(d1)}}, missing: "[]", unnumbered: 1},
		{name: "events after the terminal one do not matter", events: append(append([]event(nil), all...), ev(9, start)), done: true, missing: "[8]", args: `{"city":"Oslo"}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			asm := assemble(stored(provider.Anthropic, test.events...), DefaultMaxStreamEvents)
			if asm.done != test.done || fmt.Sprint(asm.missing()) != test.missing || asm.ended != test.ended || asm.unnumbered != test.unnumbered {
				t.Fatalf("done=%v missing=%v ended=%v unnumbered=%d, want %v %s %v %d",
					asm.done, asm.missing(), asm.ended, asm.unnumbered, test.done, test.missing, test.ended, test.unnumbered)
			}
			if test.args == "" {
				return
			}
			resp := asm.evidence()
			if len(resp.Calls) != 1 || resp.Calls[0].Arguments != test.args || resp.Calls[0].Name != "get_weather" {
				t.Fatalf("calls %+v, want get_weather %s", resp.Calls, test.args)
			}
		})
	}
}

func TestAssemble_unknown_provider_assembles_nothing(t *testing.T) {
	asm := assemble(stored("openai-legacy", event{seq: 1, data: []byte(`{"x":1}`)}), DefaultMaxStreamEvents)
	if asm.done || len(asm.evidence().Calls) != 0 || asm.provider != "openai-legacy" {
		t.Fatalf("%+v", asm)
	}
}

func TestAssembly_why_names_the_cause(t *testing.T) {
	ev := func(seq int) event { return event{seq: seq, data: []byte(`{}`)} }
	asm := assemble(stored(provider.Ollama, ev(1), ev(2), ev(5), event{isEnd: true, end: "reset"}), 100)
	want := "the producer ended the stream before its terminal event: reset; 3 events arrived; missing Toolgate-Seq 3-4"
	if got := asm.why(time.Minute); got != want {
		t.Fatalf("why = %q\nwant  %q", got, want)
	}
	var evs []event
	for seq := 2; seq <= 26; seq += 2 {
		evs = append(evs, ev(seq))
	}
	asm = assemble(stored(provider.Ollama, evs...), 100)
	want = "no terminal event within the 1m0s idle timeout; 13 events arrived; missing Toolgate-Seq 1,3,5,7,9,11,13,15,17,19 and 3 more"
	if got := asm.why(time.Minute); got != want {
		t.Fatalf("why = %q\nwant  %q", got, want)
	}
}

func TestAssembly_msg_is_a_transcript_that_splits_back_into_the_events(t *testing.T) {
	evs := []event{{seq: 2, data: []byte(`{"b":2}`)}, {seq: 1, data: []byte(`{"a":1}`)}}
	asm := assemble(stored(provider.Ollama, evs...), DefaultMaxStreamEvents)
	m := asm.msg(streamRef{rid: "r1"})
	got, err := provider.SplitTranscript(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0]) != `{"a":1}` || string(got[1]) != `{"b":2}` {
		t.Fatalf("transcript splits into %q", got)
	}
	if m.StreamSeq != 101 || m.Subject != streams.InStream("r1") || m.Header.Get(streams.HeaderSeq) != "" {
		t.Fatalf("msg %s seq %d header %v", m.Subject, m.StreamSeq, m.Header)
	}
}
