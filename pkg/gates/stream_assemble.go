package gates

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/provider"
	"github.com/toolgate/toolgate/pkg/worker"
	"github.com/toolgate/toolgate/streams"
)

// assembly is what the stored events of one stream add up to. It is built
// from the stream alone, so every replica that builds it gets the same.
type assembly struct {
	provider string      // from the first event naming one
	header   nats.Header // that event's headers: the producer's request context
	events   []storedEvent
	// done: events 1..k arrived without a gap and event k is the provider's
	// terminal event; resp is then the response as the provider finished it.
	// Otherwise resp is everything that arrived, gaps skipped, for evidence.
	done       bool
	resp       provider.Response
	ended      bool // a Toolgate-End arrived
	endReason  string
	missing    []int // Toolgate-Seq values absent below the highest one seen
	unnumbered int   // events without a readable Toolgate-Seq, ignored
	lastAt     time.Time
	lastSeq    uint64 // the highest stream sequence among the events
}

// assemble sorts the stored events by Toolgate-Seq, drops duplicates (the
// first stored copy wins), finds gaps, and feeds the events in order to a
// fresh accumulator. It never fails: an unknown provider leaves resp empty.
func assemble(stored []storedEvent) assembly {
	var asm assembly
	for _, ev := range stored {
		if ev.at.After(asm.lastAt) {
			asm.lastAt = ev.at
		}
		asm.lastSeq = max(asm.lastSeq, ev.streamSeq)
		if ev.end {
			if !asm.ended || asm.endReason == "" {
				asm.endReason = ev.endReason
			}
			asm.ended = true
		}
		if p := ev.header.Get(streams.HeaderProvider); p != "" && asm.provider == "" {
			asm.provider, asm.header = p, ev.header
		}
		switch {
		case ev.end && len(bytes.TrimSpace(ev.data)) == 0:
		case ev.seq == 0:
			asm.unnumbered++
		default:
			asm.events = append(asm.events, ev)
		}
	}
	if asm.header == nil && len(stored) > 0 {
		asm.header = stored[0].header
	}
	sort.SliceStable(asm.events, func(i, j int) bool { return asm.events[i].seq < asm.events[j].seq })
	uniq := asm.events[:0]
	for _, ev := range asm.events {
		if n := len(uniq); n > 0 && uniq[n-1].seq == ev.seq {
			continue
		}
		uniq = append(uniq, ev)
	}
	asm.events = uniq
	next := 1
	for _, ev := range asm.events {
		for ; next < ev.seq; next++ {
			asm.missing = append(asm.missing, next)
		}
		next = ev.seq + 1
	}
	if !provider.Known(asm.provider) {
		return asm
	}
	acc, _ := provider.NewAccumulator(asm.provider, maxTokens(asm.header)...)
	for i, ev := range asm.events {
		if ev.seq != i+1 {
			break // a gap: what follows cannot finish the response yet
		}
		_ = acc.Add(ev.data) // garbage is kept out by the accumulator itself
		if acc.Done() {
			asm.done, asm.resp = true, acc.Response()
			return asm
		}
	}
	// Not finished: everything that arrived, for the record.
	acc, _ = provider.NewAccumulator(asm.provider, maxTokens(asm.header)...)
	for _, ev := range asm.events {
		_ = acc.Add(ev.data)
	}
	asm.resp = acc.Response()
	return asm
}

// why says in words why an unfinished stream is incomplete.
func (asm assembly) why(idle time.Duration) string {
	var parts []string
	switch {
	case asm.ended && asm.endReason != "":
		parts = append(parts, fmt.Sprintf("the producer ended the stream before its terminal event: %s", asm.endReason))
	case asm.ended:
		parts = append(parts, "the producer ended the stream before its terminal event")
	default:
		parts = append(parts, fmt.Sprintf("no terminal event within the %v idle timeout", idle))
	}
	parts = append(parts, fmt.Sprintf("%d events arrived", len(asm.events)))
	if len(asm.missing) > 0 {
		parts = append(parts, fmt.Sprintf("missing Toolgate-Seq %s", seqList(asm.missing)))
	}
	if asm.unnumbered > 0 {
		parts = append(parts, fmt.Sprintf("%d events without a Toolgate-Seq header were ignored", asm.unnumbered))
	}
	return strings.Join(parts, "; ")
}

func seqList(s []int) string {
	const show = 10
	var b strings.Builder
	for i, n := range s {
		if i == show {
			fmt.Fprintf(&b, " and %d more", len(s)-show)
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprint(&b, n)
	}
	return b.String()
}

// msg is the assembled stream as one input: the producer's headers, the
// events as an SSE transcript (which `toolgate publish` can send again), and
// the stream sequence of the last event, so a dead letter built from it has
// an id no other input shares.
func (asm assembly) msg(rid string) worker.Msg {
	var b bytes.Buffer
	for _, ev := range asm.events {
		for _, line := range bytes.Split(ev.data, []byte("\n")) {
			b.WriteString("data: ")
			b.Write(line)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	h := nats.Header{}
	for k, v := range asm.header {
		h[k] = v
	}
	h.Del(streams.HeaderSeq)
	h.Del(nats.MsgIdHdr)
	h.Set(streams.HeaderResponseID, rid)
	return worker.Msg{Subject: streams.InStream(rid), Header: h, Data: b.Bytes(), StreamSeq: asm.lastSeq}
}
