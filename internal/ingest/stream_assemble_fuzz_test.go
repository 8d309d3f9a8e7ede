package ingest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/streams"
)

// fuzzSeqs are the Toolgate-Seq headers a fuzzed event can carry: in range,
// at and past the limit, zero, negative, huge, not a number, none.
var fuzzSeqs = []string{"1", "2", "3", "4", "5", "6", "7", "8", "50", "51", "0", "-3", "4611686018427387904", "99999999999999999999999", "x", ""}

// fuzzData are the event bodies: one Anthropic tool call, garbage, nothing.
var fuzzData = []string{
	`{"type":"message_start","message":{"id":"m","model":"c"}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"get_weather","input":{}}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"Oslo\"}"}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`,
	`{"type":"message_stop"}`,
	`{not json`,
	``,
}

// fuzzEvents turns bytes into stored events, three bytes an event: the seq,
// the body, and whether it carries Toolgate-End or an oversized header.
func fuzzEvents(b []byte) []storedEvent {
	var out []storedEvent
	t0 := time.Unix(1_700_000_000, 0)
	for i := 0; i+2 < len(b) && len(out) < 200; i += 3 {
		h := nats.Header{}
		h.Set(streams.HeaderProvider, provider.Anthropic)
		if s := fuzzSeqs[int(b[i])%len(fuzzSeqs)]; s != "" {
			h.Set(streams.HeaderSeq, s)
		}
		if b[i+2]%7 == 0 {
			h.Set(streams.HeaderEnd, fmt.Sprintf("reason %d", b[i+2]))
		}
		if b[i+2]%11 == 0 {
			h.Set(streams.HeaderTenant, strings.Repeat("t", 2<<10)) // over the header limit
		}
		n := len(out)
		out = append(out, eventOf(h, []byte(fuzzData[int(b[i+1])%len(fuzzData)]), uint64(n+1), t0.Add(time.Duration(n)*time.Millisecond)))
	}
	return out
}

// FuzzAssemble feeds arbitrary sequences of stream events (huge, zero,
// negative and unreadable seqs, duplicates, terminal events, Toolgate-End)
// to the assembly. It never panics, keeps at most one event and one missing
// range per stored event, is done only when events 1..k are contiguous with
// k the terminal event, and moving later copies of a seq changes nothing.
func FuzzAssemble(f *testing.F) {
	f.Add([]byte{0, 0, 1, 1, 1, 1, 2, 2, 1, 3, 3, 1, 4, 4, 1, 5, 5, 1, 6, 6, 1})
	f.Add([]byte{0, 0, 1, 12, 6, 1})          // seq 1, then a huge terminal seq
	f.Add([]byte{6, 6, 1, 0, 0, 1, 0, 6, 7})  // reversed, a duplicate, an end
	f.Add([]byte{8, 0, 1, 9, 6, 1, 10, 6, 1}) // the limit, past it, zero
	f.Fuzz(func(t *testing.T, b []byte) {
		const maxSeq = 50
		evs := fuzzEvents(b)
		asm := assemble(evs, maxSeq)
		if len(asm.bySeq) > len(evs) || len(asm.missing()) > len(asm.bySeq)+1 {
			t.Fatalf("%d events kept, %d missing ranges, from %d stored", len(asm.bySeq), len(asm.missing()), len(evs))
		}
		for seq := range asm.bySeq {
			if seq < 1 || seq > maxSeq {
				t.Fatalf("kept Toolgate-Seq %d outside 1..%d", seq, maxSeq)
			}
		}
		if asm.stored != len(evs) || asm.refused+asm.bigHeader+asm.unnumbered+len(asm.bySeq) > len(evs) {
			t.Fatalf("stored %d refused %d+%d unnumbered %d kept %d of %d", asm.stored, asm.refused, asm.bigHeader, asm.unnumbered, len(asm.bySeq), len(evs))
		}
		for _, ev := range asm.bySeq {
			if refusal(ev, maxSeq) != "" {
				t.Fatalf("kept a refused event (Toolgate-Seq %d)", ev.seq)
			}
		}
		_ = asm.why(time.Minute)
		_ = asm.msg(streamRef{rid: "r"})
		_ = asm.evidence()
		if asm.done {
			// Done only when 1..k are present and k is terminal: replay them.
			acc, _ := provider.NewAccumulator(provider.Anthropic)
			k := 1
			for ; !acc.Done(); k++ {
				ev, ok := asm.bySeq[k]
				if !ok {
					t.Fatalf("done, but Toolgate-Seq %d is missing before the terminal event", k)
				}
				_ = acc.Add(ev.data)
			}
			if fmt.Sprint(acc.Response().Calls) != fmt.Sprint(asm.resp.Calls) {
				t.Fatalf("done with %v, the contiguous events give %v", asm.resp.Calls, acc.Response().Calls)
			}
		}
		// Later copies of a seq, moved to the end in reverse, change nothing.
		seen := map[string]bool{}
		var firsts, later []storedEvent
		for _, ev := range evs {
			key := ev.header.Get(streams.HeaderSeq)
			if ev.seq > 0 && seen[key] && refusal(ev, maxSeq) == "" {
				later = append(later, ev)
				continue
			}
			if (!ev.end || len(bytes.TrimSpace(ev.data)) > 0) && refusal(ev, maxSeq) == "" { // a bare end marker or a refused event is no copy
				seen[key] = true
			}
			firsts = append(firsts, ev)
		}
		slices.Reverse(later)
		other := assemble(append(firsts, later...), maxSeq)
		if other.done != asm.done || fmt.Sprint(other.missing()) != fmt.Sprint(asm.missing()) ||
			fmt.Sprint(other.evidence().Calls) != fmt.Sprint(asm.evidence().Calls) || len(other.bySeq) != len(asm.bySeq) {
			t.Fatalf("moving later copies changed the assembly: done %v/%v missing %v/%v", asm.done, other.done, asm.missing(), other.missing())
		}
	})
}
