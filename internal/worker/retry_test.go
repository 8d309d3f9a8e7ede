package worker

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestWorker_retry_redelivers_past_max_deliver_without_dead_letter: an input
// that is not done yet bounces more often than the default MaxDeliver would
// allow and is still handled in the end, with nothing dead-lettered.
func TestWorker_retry_redelivers_past_max_deliver_without_dead_letter(t *testing.T) {
	r := newRig(t, 5*time.Second, -1)
	r.publish(t, "in.x", "late")
	var last atomic.Uint64
	start(t, r, Config{}, func(ctx context.Context, m Msg) ([]Output, error) {
		last.Store(m.NumDelivered)
		if m.NumDelivered < 5 {
			return nil, Retry(10 * time.Millisecond)
		}
		return echo(ctx, m)
	})
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := r.count(t, "OUT", "out.late"); n != 1 {
			return fmt.Errorf("%d outputs", n)
		}
		return r.consumerIdle("stage")()
	})
	if got := last.Load(); got != 5 {
		t.Errorf("handled at delivery %d, want 5", got)
	}
	if n := r.count(t, "OUT", "dlq.>"); n != 0 {
		t.Errorf("%d dead letters for an input that only asked to be retried", n)
	}
}

func TestRetry_is_recognised_through_wrapping(t *testing.T) {
	err := fmt.Errorf("gate: stream open: %w", Retry(3*time.Second))
	d, ok := retryAfter(err)
	if !ok || d != 3*time.Second {
		t.Fatalf("retryAfter = %v, %v; want 3s, true", d, ok)
	}
	if _, ok := retryAfter(errors.New("plain")); ok {
		t.Fatal("a plain error is not a retry")
	}
	if d, _ := retryAfter(Retry(0)); d <= 0 {
		t.Fatalf("Retry(0) delay %v, want a positive delay", d)
	}
}

// TestWorker_timer_retried_past_ten_deliveries_is_not_dead_lettered: the
// worker takes MaxDeliver from its consumer on the server. The accumulate
// timer consumer allows unlimited deliveries (-1), and a worker that kept a
// client-side 10 of its own dead-lettered a timer whose transient failures
// outlasted ten deliveries.
func TestWorker_timer_retried_past_ten_deliveries_is_not_dead_lettered(t *testing.T) {
	r := newRig(t, 5*time.Second, -1)
	r.publish(t, "in.x", "timer")
	var last atomic.Uint64
	start(t, r, Config{Backoff: func(uint64) time.Duration { return 5 * time.Millisecond }}, func(ctx context.Context, m Msg) ([]Output, error) {
		last.Store(m.NumDelivered)
		if m.NumDelivered < 13 {
			return nil, errors.New("kv unavailable")
		}
		return echo(ctx, m)
	})
	testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := r.count(t, "OUT", "out.timer"); n != 1 {
			return fmt.Errorf("%d outputs after %d deliveries", n, last.Load())
		}
		return r.consumerIdle("stage")()
	})
	if got := last.Load(); got != 13 {
		t.Errorf("handled at delivery %d, want 13", got)
	}
	if n := r.count(t, "OUT", "dlq.>"); n != 0 {
		t.Errorf("%d dead letters for an input of an unlimited consumer", n)
	}
}

// TestWorker_nak_delay_follows_the_consumer_backoff: a consumer with a
// BackOff sets the worker's nak delays, its last step repeating.
func TestWorker_nak_delay_follows_the_consumer_backoff(t *testing.T) {
	w := &Worker{cfg: Config{Backoff: Backoff}}
	if got := w.nakDelay(3); got != Backoff(3) {
		t.Errorf("no BackOff: delay %v, want worker.Backoff %v", got, Backoff(3))
	}
	w.backOff = []time.Duration{time.Second, 2 * time.Second}
	for n, want := range map[uint64]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 7: 2 * time.Second} {
		if got := w.nakDelay(n); got != want {
			t.Errorf("delivery %d: delay %v, want %v", n, got, want)
		}
	}
}
