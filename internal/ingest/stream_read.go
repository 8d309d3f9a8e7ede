package ingest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/streams"
)

// storedEvent is one message TOOLGATE_IN holds for a stream subject.
type storedEvent struct {
	seq       int    // Toolgate-Seq; 0 when missing or unreadable
	badSeq    bool   // a Toolgate-Seq header that is not a number from 1 up
	bigHeader string // the first Toolgate-* header over pipeline.InputHeaderMax bytes
	data      []byte
	end       bool // Toolgate-End present: the producer's connection broke
	endReason string
	header    nats.Header
	streamSeq uint64
	at        time.Time
}

func eventOf(h nats.Header, data []byte, streamSeq uint64, at time.Time) storedEvent {
	ev := storedEvent{data: data, header: h, streamSeq: streamSeq, at: at}
	ev.bigHeader, _ = oversizeHeader(h)
	if raw := strings.TrimSpace(h.Get(streams.HeaderSeq)); raw != "" {
		if n, err := strconv.Atoi(raw); err == nil && n > 0 {
			ev.seq = n
		} else {
			ev.badSeq = true // not a number, zero, negative or past any int
		}
	}
	if v, ok := h[streams.HeaderEnd]; ok {
		ev.end = true
		if len(v) > 0 {
			ev.endReason = v[0]
		}
	}
	return ev
}

// refusal is the code ev is refused with on its own, "" when it is not: a
// Toolgate-Seq outside 1..max, or a Toolgate-* header over
// pipeline.InputHeaderMax bytes. A refused event is dead-lettered on arrival
// and left out of every assembly.
func refusal(ev storedEvent, max int) string {
	switch {
	case ev.badSeq || ev.seq > max:
		return CodeSeqOutOfRange
	case ev.bigHeader != "":
		return CodeHeaderTooLarge
	}
	return ""
}

// jsHandles are the JetStream handles the stream path opens once.
type jsHandles struct {
	mu   sync.Mutex
	in   jetstream.Stream
	done jetstream.KeyValue
	ids  jetstream.KeyValue // response ids used (claim.go)
}

func (a *Accumulate) handles(ctx context.Context) (jetstream.Stream, jetstream.KeyValue, error) {
	if a.JS == nil {
		return nil, nil, errors.New("accumulate: streamed input needs JetStream (Accumulate.JS is nil)")
	}
	a.js.mu.Lock()
	defer a.js.mu.Unlock()
	if a.js.in == nil {
		st, err := a.JS.Stream(ctx, streams.StreamIn)
		if err != nil {
			return nil, nil, fmt.Errorf("accumulate: stream %s: %w", streams.StreamIn, err)
		}
		a.js.in = st
	}
	if a.js.done == nil {
		kv, err := a.JS.KeyValue(ctx, streams.BucketResponses)
		if err != nil {
			return nil, nil, fmt.Errorf("accumulate: bucket %s: %w", streams.BucketResponses, err)
		}
		a.js.done = kv
	}
	return a.js.in, a.js.done, nil
}

// finished reports whether ref's stream was already assembled or given up on.
func (a *Accumulate) finished(ctx context.Context, ref streamRef) (bool, error) {
	_, kv, err := a.handles(ctx)
	if err != nil {
		return false, err
	}
	_, err = kv.Get(ctx, ref.key())
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	}
	return false, fmt.Errorf("accumulate: responses bucket: %w", err)
}

// readInto feeds asm every message TOOLGATE_IN holds for ref's stream
// subject after the last one asm has seen, in stream order, through a
// short-lived ephemeral consumer that is deleted afterwards, in each place
// its events may be (streamPlaces: a partition, two in the claim period
// after P changed, whose events the assembly merges by Toolgate-Seq).
// Nothing is acked or consumed: the events stay stored for the next reader
// (a replica, the timer, an operator). It reports how many events were
// new. A stream that stores more than maxEvents events or more than
// MaxBody bytes stops the read with errTooMany or errTooLarge.
func (a *Accumulate) readInto(ctx context.Context, ref streamRef, asm *assembly) (int, error) {
	if _, _, err := a.handles(ctx); err != nil {
		return 0, err
	}
	places, err := a.streamPlaces(ctx, ref)
	if err != nil {
		return 0, err
	}
	got := 0
	for _, at := range places {
		n, err := a.readAt(ctx, ref, at, asm)
		got += n
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// readAt is readInto of one place.
func (a *Accumulate) readAt(ctx context.Context, ref streamRef, at streams.Place, asm *assembly) (int, error) {
	stream, subj := streams.InPlaceSubject(ref.subject(), at)
	cfg := jetstream.ConsumerConfig{
		FilterSubject:     subj,
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: time.Minute, // cleans up after a reader that died
		MemoryStorage:     true,
	}
	if last := asm.read[at]; last > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, last+1
	}
	cons, err := a.JS.CreateConsumer(ctx, stream, cfg)
	if err != nil {
		return 0, fmt.Errorf("accumulate: read %s: %w", subj, err)
	}
	name := cons.CachedInfo().Name
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.JS.DeleteConsumer(dctx, stream, name) // else InactiveThreshold removes it
	}()
	want := int(min(cons.CachedInfo().NumPending, uint64(a.maxEvents())+1)) // never more than the limit needs
	limit, maxEvents := a.maxBody(), a.maxEvents()
	got := 0
	for got < want {
		batch, err := cons.Fetch(min(want-got, 256), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return got, fmt.Errorf("accumulate: read %s: %w", subj, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			a.asm.read.Add(1)
			md, err := m.Metadata()
			if err != nil {
				return got, fmt.Errorf("accumulate: read %s: %w", subj, err)
			}
			if asm.stored+1 > maxEvents {
				return got, errTooMany{limit: maxEvents, streamSeq: md.Sequence.Stream}
			}
			if asm.size+len(m.Data()) > limit {
				return got, errTooLarge{size: asm.size + len(m.Data()), limit: limit, streamSeq: md.Sequence.Stream}
			}
			asm.add(eventOf(m.Headers(), m.Data(), md.Sequence.Stream, md.Timestamp))
			if asm.read == nil {
				asm.read = map[streams.Place]uint64{}
			}
			asm.read[at] = max(asm.read[at], md.Sequence.Stream)
			got++
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return got, fmt.Errorf("accumulate: read %s: %w", subj, err)
		}
		if n == 0 {
			return got, fmt.Errorf("accumulate: read %s: %d of %d new stored events arrived", subj, got, want)
		}
	}
	return got, nil
}

// errTooMany is a stream that stored more events than MaxStreamEvents.
type errTooMany struct {
	limit     int
	streamSeq uint64 // of the first event past the limit
}

func (e errTooMany) Error() string {
	return fmt.Sprintf("the stream stored more than %d events, the limit of one response (MaxStreamEvents, TOOLGATE_STREAM_MAX_EVENTS)", e.limit)
}

// errTooLarge is a stream whose events add up to more than MaxBody.
type errTooLarge struct {
	size, limit int
	streamSeq   uint64 // of the event that crossed the limit
}

func (e errTooLarge) Error() string {
	return fmt.Sprintf("stream events add up to at least %d bytes, over the %d-byte limit", e.size, e.limit)
}

func (a *Accumulate) maxBody() int {
	if a.MaxBody <= 0 {
		return streams.InMaxBody
	}
	return a.MaxBody
}
