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
// that is not done yet bounces more often than the worker's MaxDeliver and is
// still handled in the end, with nothing dead-lettered.
func TestWorker_retry_redelivers_past_max_deliver_without_dead_letter(t *testing.T) {
	r := newRig(t, 5*time.Second, -1)
	r.publish(t, "in.x", "late")
	var last atomic.Uint64
	start(t, r, Config{MaxDeliver: 2}, func(ctx context.Context, m Msg) ([]Output, error) {
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
