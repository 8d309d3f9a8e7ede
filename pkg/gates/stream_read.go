package gates

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
	seq       int // Toolgate-Seq; 0 when missing or unreadable
	data      []byte
	end       bool // Toolgate-End present: the producer's connection broke
	endReason string
	header    nats.Header
	streamSeq uint64
	at        time.Time
}

func eventOf(h nats.Header, data []byte, streamSeq uint64, at time.Time) storedEvent {
	ev := storedEvent{data: data, header: h, streamSeq: streamSeq, at: at}
	if n, err := strconv.Atoi(strings.TrimSpace(h.Get(streams.HeaderSeq))); err == nil && n > 0 {
		ev.seq = n
	}
	if v, ok := h[streams.HeaderEnd]; ok {
		ev.end = true
		if len(v) > 0 {
			ev.endReason = v[0]
		}
	}
	return ev
}

// jsHandles are the JetStream handles the stream path opens once.
type jsHandles struct {
	mu   sync.Mutex
	in   jetstream.Stream
	done jetstream.KeyValue
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

// finished reports whether rid's stream was already assembled or given up on.
func (a *Accumulate) finished(ctx context.Context, rid string) (bool, error) {
	_, kv, err := a.handles(ctx)
	if err != nil {
		return false, err
	}
	_, err = kv.Get(ctx, rid)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	}
	return false, fmt.Errorf("accumulate: responses bucket: %w", err)
}

// readStream returns every message TOOLGATE_IN holds for rid's stream
// subject, in stream order, through a short-lived ephemeral consumer that is
// deleted afterwards. Nothing is acked or consumed: the events stay stored
// for the next reader (a replica, the timer, an operator).
func (a *Accumulate) readStream(ctx context.Context, rid string) ([]storedEvent, error) {
	in, _, err := a.handles(ctx)
	if err != nil {
		return nil, err
	}
	subj := streams.InStream(rid)
	cons, err := in.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubject:     subj,
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: time.Minute, // cleans up after a reader that died
		MemoryStorage:     true,
	})
	if err != nil {
		return nil, fmt.Errorf("accumulate: read %s: %w", subj, err)
	}
	name := cons.CachedInfo().Name
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.JS.DeleteConsumer(dctx, streams.StreamIn, name) // else InactiveThreshold removes it
	}()
	want := int(cons.CachedInfo().NumPending)
	limit := a.maxBody()
	var out []storedEvent
	size := 0
	for len(out) < want {
		batch, err := cons.Fetch(min(want-len(out), 256), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return nil, fmt.Errorf("accumulate: read %s: %w", subj, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				return nil, fmt.Errorf("accumulate: read %s: %w", subj, err)
			}
			size += len(m.Data())
			if size > limit {
				return nil, errTooLarge{size: size, limit: limit, streamSeq: md.Sequence.Stream}
			}
			out = append(out, eventOf(m.Headers(), m.Data(), md.Sequence.Stream, md.Timestamp))
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return nil, fmt.Errorf("accumulate: read %s: %w", subj, err)
		}
		if got == 0 {
			return nil, fmt.Errorf("accumulate: read %s: %d of %d stored events arrived", subj, len(out), want)
		}
	}
	return out, nil
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
		return 8 << 20
	}
	return a.MaxBody
}
