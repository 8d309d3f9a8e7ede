package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// settle waits, up to total, until every accepted response has a result and
// every stage consumer has nothing pending and nothing unacknowledged — so
// nothing is in flight that could still publish a late or second outcome.
func settle(ctx context.Context, js jetstream.JetStream, accepted map[string]string, total time.Duration, logf func(string, ...any)) error {
	seen := map[string]bool{}
	var next cursor
	lastLog := time.Now()
	return testenv.Poll(total, 500*time.Millisecond, func() error {
		rs, n, err := readResults(ctx, js, next)
		if err != nil {
			return err
		}
		next = n
		for _, r := range rs {
			seen[r.ResponseID] = true
		}
		missing := 0
		for rid := range accepted {
			if !seen[rid] {
				missing++
			}
		}
		busy := idle(ctx, js)
		if time.Since(lastLog) > 5*time.Second {
			logf("settling: %d of %d responses without a result; %v", missing, len(accepted), busy)
			lastLog = time.Now()
		}
		if missing > 0 {
			return fmt.Errorf("%d of %d accepted responses have no result yet", missing, len(accepted))
		}
		return busy
	})
}

// idle returns nil when every stage consumer (and the accumulate timer
// consumer) has no pending and no unacknowledged message.
func idle(ctx context.Context, js jetstream.JetStream) error {
	for _, st := range append(streams.Names(), streams.AccumulateTimer) {
		for _, d := range streams.Durables(st, 0) { // its lanes too
			stream := streams.DurableStream(st, d)
			if st == streams.AccumulateTimer {
				stream = streams.StreamGates
			}
			if err := testenv.ConsumerIdle(ctx, js, stream, d); err != nil {
				return err
			}
		}
		if st == streams.Accumulate { // its durables in TOOLGATE_RESPONSES' and TOOLGATE_IN's partitions
			names, err := streams.IngestPartitionNames(ctx, js)
			if err != nil {
				return err
			}
			for _, name := range names {
				for _, d := range streams.Durables(st, 0) {
					if !streams.IngestPartOf(streams.DurableStream(st, d), name) {
						continue
					}
					if err := testenv.ConsumerIdle(ctx, js, name, d); err != nil {
						return fmt.Errorf("%s: %w", name, err)
					}
				}
			}
		}
		if !streams.Laned(st) {
			continue
		}
		ps, err := streams.PartitionStreamsOf(ctx, js, st)
		if err != nil {
			return err
		}
		for _, p := range ps { // its durables in each partition stream, under the same names
			for _, d := range streams.Durables(st, 0) {
				if err := testenv.ConsumerIdle(ctx, js, streams.PartitionStream(st, p), d); err != nil {
					return fmt.Errorf("partition %d: %w", p, err)
				}
			}
		}
	}
	return nil
}

// listLetters reads every dead letter.
func listLetters(ctx context.Context, js jetstream.JetStream) ([]dlq.Letter, error) {
	var letters []dlq.Letter
	err := testenv.Poll(30*time.Second, 500*time.Millisecond, func() error {
		var err error
		letters, err = dlq.List(ctx, js, dlq.Filter{})
		return err
	})
	return letters, err
}
