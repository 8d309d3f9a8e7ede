package dlq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/streams"
)

// List returns the dead letters that match f, oldest first. It reads the
// stream with an ordered consumer from f.Since (or the start) and stops at
// the last matching message stored when it began, or past f.Until.
func List(ctx context.Context, js jetstream.JetStream, f Filter) ([]Letter, error) {
	st, err := js.Stream(ctx, streams.StreamDLQ)
	if err != nil {
		return nil, fmt.Errorf("dlq: stream %s: %w", streams.StreamDLQ, err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(f.Subject()))
	if err != nil {
		return nil, fmt.Errorf("dlq: %w", err)
	}
	var stored uint64
	for _, n := range info.State.Subjects {
		stored += n
	}
	if stored == 0 || (!f.Since.IsZero() && f.Since.After(info.State.LastTime)) {
		return nil, nil
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{f.Subject()}}
	if !f.Since.IsZero() {
		since := f.Since
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	c, err := st.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("dlq: %w", err)
	}
	var out []Letter
	// A fetch returns once it has its batch, so ask for exactly what is
	// left: one message first, then what its NumPending says remains.
	want := 1
	for want > 0 {
		batch, err := c.Fetch(want, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, fmt.Errorf("dlq: read: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return nil, fmt.Errorf("dlq: %w", err)
			}
			if !f.Until.IsZero() && md.Timestamp.After(f.Until) {
				return out, nil // stored in time order: the rest is later still
			}
			if l := Decode(m.Subject(), md.Sequence.Stream, md.Timestamp, m.Headers(), m.Data()); f.Match(l) {
				out = append(out, l)
			}
			want = int(min(md.NumPending, 500))
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("dlq: read: %w", err)
		}
		if n == 0 {
			break // nothing more arrived within the wait (aged out meanwhile)
		}
	}
	return out, nil
}

// Get returns the dead letter at stream sequence seq.
func Get(ctx context.Context, js jetstream.JetStream, seq uint64) (Letter, error) {
	st, err := js.Stream(ctx, streams.StreamDLQ)
	if err != nil {
		return Letter{}, fmt.Errorf("dlq: stream %s: %w", streams.StreamDLQ, err)
	}
	m, err := st.GetMsg(ctx, seq)
	if err != nil {
		return Letter{}, fmt.Errorf("dlq: seq %d: %w (list them with `toolgate dlq ls`)", seq, err)
	}
	return Decode(m.Subject, m.Sequence, m.Time, m.Header, m.Data), nil
}
