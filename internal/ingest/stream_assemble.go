package ingest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// assembly is what the stored events of one stream add up to, built event
// by event in stream order. It depends on the stored events alone, so every
// replica that builds it from the same events gets the same; a replica may
// keep one between reads and feed it only the events stored since (add), and
// the work over a whole stream is linear in its events.
type assembly struct {
	maxSeq   int         // Toolgate-Seq above it is refused
	provider string      // from the first event naming one
	header   nats.Header // that event's headers: the producer's request context
	// bySeq holds one event per Toolgate-Seq (the first stored copy wins),
	// at most one per stored event, never one per missing seq.
	bySeq map[int]storedEvent
	// next: events 1..next-1 are present and fed, in order, to acc.
	next int
	acc  *provider.Accumulator
	// done: events 1..k arrived without a gap and event k is the provider's
	// terminal event; resp is then the response as the provider finished it.
	done       bool
	resp       provider.Response
	ended      bool // a Toolgate-End arrived
	endReason  string
	highest    int // highest Toolgate-Seq kept
	unnumbered int // events without a Toolgate-Seq header, ignored
	// undecodable: the first event of the contiguous prefix the provider's
	// decoder refused; the response can never be what the model sent.
	undecodable string
	refused     int // events with a Toolgate-Seq outside 1..maxSeq, ignored
	bigHeader   int // events with a Toolgate-* header over the limit, ignored
	stored      int // messages read, duplicates included
	size        int // their data bytes
	kept        int // data bytes of the events in bySeq
	lastAt      time.Time
	lastSeq     uint64 // the highest stream sequence read
	// read: the highest stream sequence read in each place (the
	// partitions of TOOLGATE_IN a stream's events may be in, each with
	// its own sequences: in_partitions.go)
	read    map[streams.Place]uint64
	binding // who sent it (stream_bind.go)
}

func newAssembly(maxSeq int, who func(nats.Header, time.Time) sender) *assembly {
	return &assembly{maxSeq: maxSeq, bySeq: map[int]storedEvent{}, next: 1, binding: binding{who: who}}
}

// assemble builds the assembly of stored, as one read of the whole stream,
// with dev mode's binding (headers on trust).
func assemble(stored []storedEvent, maxSeq int) *assembly {
	asm := newAssembly(maxSeq, nil)
	for _, ev := range stored {
		asm.add(ev)
	}
	return asm
}

// add takes the next stored event (in stream order). It drops identical
// duplicates, records a different payload for a stored seq or an event of
// another sender as the stream's conflict (stream_bind.go), keeps the first
// stored copy either way, and feeds the accumulator as far as the
// events are contiguous from 1. It never fails: an unknown provider leaves
// the response empty.
func (asm *assembly) add(ev storedEvent) {
	asm.stored++
	asm.size += len(ev.data)
	asm.lastSeq = max(asm.lastSeq, ev.streamSeq)
	if ev.at.After(asm.lastAt) {
		asm.lastAt = ev.at // any stored event keeps the stream from going idle
	}
	switch refusal(ev, asm.maxSeq) {
	case CodeSeqOutOfRange: // as if it never arrived: it was dead-lettered on its own
		asm.refused++
		return
	case CodeHeaderTooLarge:
		asm.bigHeader++
		return
	}
	if ev.end {
		if !asm.ended || asm.endReason == "" {
			asm.endReason = ev.endReason
		}
		asm.ended = true
	}
	asm.bind(ev, asm.provider)
	if asm.header == nil {
		asm.header = ev.header // until an event names the provider
	}
	if p := ev.header.Get(streams.HeaderProvider); p != "" && asm.provider == "" {
		asm.provider, asm.header = p, ev.header
		if provider.Known(p) {
			asm.acc, _ = provider.NewAccumulator(p, maxTokens(ev.header)...)
		}
	}
	switch {
	case ev.end && len(bytes.TrimSpace(ev.data)) == 0:
	case ev.seq == 0:
		asm.unnumbered++
	default:
		if first, dup := asm.bySeq[ev.seq]; dup {
			asm.differs(first, ev)
		} else {
			asm.bySeq[ev.seq] = ev
			asm.kept += len(ev.data)
			asm.highest = max(asm.highest, ev.seq)
		}
	}
	asm.advance()
}

// advance feeds the accumulator every event that now continues the
// contiguous prefix, stopping at the provider's terminal event.
func (asm *assembly) advance() {
	if asm.acc == nil || asm.done || asm.undecodable != "" {
		return
	}
	for {
		ev, ok := asm.bySeq[asm.next]
		if !ok {
			return
		}
		asm.next++
		if err := asm.acc.Add(ev.data); err != nil {
			// Skipping it would assemble calls with part of their
			// arguments missing: the stream is refused as a whole.
			asm.undecodable = fmt.Sprintf("event Toolgate-Seq %d: %v", ev.seq, err)
			return
		}
		if asm.acc.Done() {
			asm.done, asm.resp = true, asm.acc.Response()
			return
		}
	}
}

// awaitsOptional reports whether the contiguous prefix has all the
// response needs and waits only for an optional last event
// (provider.Accumulator.AwaitsOptional).
func (asm *assembly) awaitsOptional() bool {
	return !asm.done && asm.acc != nil && asm.undecodable == "" && asm.acc.AwaitsOptional()
}

// settleOptional completes an assembly that awaitsOptional without its
// optional event.
func (asm *assembly) settleOptional() {
	asm.acc.Settle()
	asm.done, asm.resp = true, asm.acc.Response()
}

// accepted is how many stored events were not refused.
func (asm *assembly) accepted() int { return asm.stored - asm.refused - asm.bigHeader }

// gap reports whether an event arrived past a missing one.
func (asm *assembly) gap() bool { return !asm.done && asm.highest >= asm.next }

// events returns the kept events ordered by Toolgate-Seq.
func (asm *assembly) events() []storedEvent {
	out := make([]storedEvent, 0, len(asm.bySeq))
	for _, ev := range asm.bySeq {
		out = append(out, ev)
	}
	slices.SortFunc(out, func(a, b storedEvent) int { return a.seq - b.seq })
	return out
}

// missing returns the Toolgate-Seq values absent below the highest kept one,
// as ranges: at most one range per kept event.
func (asm *assembly) missing() []seqRange {
	var out []seqRange
	next := 1
	for _, ev := range asm.events() {
		if ev.seq > next {
			out = append(out, seqRange{next, ev.seq - 1})
		}
		next = ev.seq + 1
	}
	return out
}

// evidence is everything that arrived, gaps skipped, for the record of a
// stream that did not finish; when done, the finished response.
func (asm *assembly) evidence() provider.Response {
	if asm.done || !provider.Known(asm.provider) {
		return asm.resp
	}
	acc, _ := provider.NewAccumulator(asm.provider, maxTokens(asm.header)...)
	for _, ev := range asm.events() {
		_ = acc.Add(ev.data)
	}
	return acc.Response()
}

// why says in words why an unfinished stream is incomplete.
func (asm *assembly) why(idle time.Duration) string {
	var parts []string
	switch {
	case asm.ended && asm.endReason != "":
		parts = append(parts, fmt.Sprintf("the producer ended the stream before its terminal event: %s", asm.endReason))
	case asm.ended:
		parts = append(parts, "the producer ended the stream before its terminal event")
	default:
		parts = append(parts, fmt.Sprintf("no terminal event within the %v idle timeout", idle))
	}
	parts = append(parts, fmt.Sprintf("%d events arrived", len(asm.bySeq)))
	if m := asm.missing(); len(m) > 0 {
		parts = append(parts, fmt.Sprintf("missing Toolgate-Seq %s", seqRanges(m)))
	}
	if asm.refused > 0 {
		parts = append(parts, fmt.Sprintf("%d events with a Toolgate-Seq outside 1..%d were refused", asm.refused, asm.maxSeq))
	}
	if asm.bigHeader > 0 {
		parts = append(parts, fmt.Sprintf("%d events with a Toolgate-* header over %d bytes were refused", asm.bigHeader, pipeline.InputHeaderMax))
	}
	if asm.unnumbered > 0 {
		parts = append(parts, fmt.Sprintf("%d events without a Toolgate-Seq header were ignored", asm.unnumbered))
	}
	return strings.Join(parts, "; ")
}

// msg is the assembled stream as one input: the producer's headers, the
// events as an SSE transcript (which `toolgate publish` can send again), and
// the stream sequence of the last event, so a dead letter built from it has
// an id no other input shares.
func (asm *assembly) msg(ref streamRef) worker.Msg {
	rid := ref.rid
	var b bytes.Buffer
	for _, ev := range asm.events() {
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
	return worker.Msg{Subject: ref.subject(), Header: h, Data: b.Bytes(), StreamSeq: asm.lastSeq}
}

// evidenceMsg is the dead-letter input of a stream refused for its size or
// event count: the producer's headers and the events read before the limit
// as a transcript (cut to its size and sha256 by the dead-letter builder when
// it cannot be stored whole), under the stream sequence of the event that
// crossed the limit. The events themselves stay in TOOLGATE_IN until they
// age out.
func (asm *assembly) evidenceMsg(ref streamRef, crossedAt uint64) worker.Msg {
	m := asm.msg(ref)
	m.StreamSeq = crossedAt
	return m
}
