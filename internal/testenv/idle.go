package testenv

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ConsumerIdle returns nil once the durable consumer of stream has been
// delivered every message stored on its filter and holds none unacknowledged.
//
// NumPending and NumAckPending alone are not enough: nats-server acknowledges
// a publish before it signals the stream's consumers (stream.go pushes the
// new sequence on an internal queue), so for a moment after a publish
// returned the consumer can show nothing pending, nothing unacknowledged and
// an old delivered sequence. The consumer must also have been delivered the
// last message its filter matches.
func ConsumerIdle(ctx context.Context, js jetstream.JetStream, stream, consumer string) error {
	c, err := js.Consumer(ctx, stream, consumer)
	if err != nil {
		return fmt.Errorf("consumer %s: %w", consumer, err)
	}
	info := c.CachedInfo() // fetched by js.Consumer just now
	if info.NumPending != 0 || info.NumAckPending != 0 {
		return fmt.Errorf("consumer %s: %d pending, %d unacknowledged", consumer, info.NumPending, info.NumAckPending)
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	filters := info.Config.FilterSubjects
	if info.Config.FilterSubject != "" {
		filters = append(filters, info.Config.FilterSubject)
	}
	if len(filters) == 0 {
		filters = []string{">"}
	}
	for _, f := range filters {
		last, err := st.GetLastMsgForSubject(ctx, f)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // nothing stored on it (or acknowledged away in a work queue)
		}
		if err != nil {
			return fmt.Errorf("stream %s, last on %s: %w", stream, f, err)
		}
		if info.Delivered.Stream < last.Sequence {
			return fmt.Errorf("consumer %s: delivered up to %d, %s holds %d", consumer, info.Delivered.Stream, f, last.Sequence)
		}
	}
	return nil
}
