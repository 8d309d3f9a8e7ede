package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestWorker_each_transient_failure_publishes_what_the_input_waits_for: every
// failed delivery before the last publishes what Retrying built for it, with
// its attempt number and the consumer's MaxDeliver; the delivery that works
// sees, through Redelivered, what the hook made of it; the last failure is a
// dead letter, not a wait.
func TestWorker_each_transient_failure_publishes_what_the_input_waits_for(t *testing.T) {
	r := newRig(t, 5*time.Second, 4)
	r.publish(t, "in.x", "call")
	r.publish(t, "in.x", "doomed")
	var mu sync.Mutex
	var seen []string
	start(t, r, Config{
		Backoff: func(uint64) time.Duration { return 5 * time.Millisecond },
		Retrying: func(m Msg, err error, a Attempt) []Output {
			if a.Next.IsZero() || !strings.Contains(err.Error(), "down") {
				t.Errorf("attempt %+v, error %v", a, err)
			}
			return []Output{{Subject: fmt.Sprintf("out.wait.%s.%d.%d", m.Data, a.N, a.Of), Data: m.Data}}
		},
		Redelivered: func(m Msg) Msg {
			mu.Lock()
			seen = append(seen, string(m.Data))
			mu.Unlock()
			m.Data = []byte(strings.TrimSuffix(string(m.Data), "+") + "+")
			return m
		},
	}, func(ctx context.Context, m Msg) ([]Output, error) {
		if strings.HasPrefix(string(m.Data), "doomed") || m.NumDelivered < 3 {
			return nil, errors.New("executor down")
		}
		return echo(ctx, m)
	})
	testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := r.count(t, "OUT", "out.call+"); n != 1 {
			return fmt.Errorf("%d outputs", n)
		}
		if n := r.count(t, "OUT", "dlq.>"); n != 1 {
			return fmt.Errorf("%d dead letters", n)
		}
		return r.consumerIdle("stage")()
	})
	for _, subj := range []string{"out.wait.call.1.4", "out.wait.call+.2.4", "out.wait.doomed.1.4", "out.wait.doomed+.2.4", "out.wait.doomed+.3.4"} {
		if n := r.count(t, "OUT", subj); n != 1 {
			t.Errorf("%s: %d messages, want 1", subj, n)
		}
	}
	if n := r.count(t, "OUT", "out.wait.*.4.>"); n != 0 {
		t.Errorf("the last delivery published %d waits; it is dead-lettered", n)
	}
	if n := r.count(t, "OUT", "out.wait.>"); n != 5 {
		t.Errorf("%d waits, want one per failed delivery but the last (5)", n)
	}
}

// TestWorker_a_wait_that_cannot_be_stored_changes_nothing: a wait whose
// publish the server refuses (no stream takes it) is logged; the input is
// retried as before and never dead-lettered for it.
func TestWorker_a_wait_that_cannot_be_stored_changes_nothing(t *testing.T) {
	r := newRig(t, 5*time.Second, 10)
	r.publish(t, "in.x", "late")
	start(t, r, Config{
		Backoff:  func(uint64) time.Duration { return 5 * time.Millisecond },
		Retrying: func(Msg, error, Attempt) []Output { return []Output{{Subject: "nowhere.wait", Data: []byte("x")}} },
	}, func(ctx context.Context, m Msg) ([]Output, error) {
		if m.NumDelivered < 3 {
			return nil, errors.New("down")
		}
		return echo(ctx, m)
	})
	testenv.Eventually(t, 30*time.Second, 10*time.Millisecond, func() error {
		if n := r.count(t, "OUT", "out.late"); n != 1 {
			return fmt.Errorf("%d outputs", n)
		}
		return r.consumerIdle("stage")()
	})
	if n := r.count(t, "OUT", "dlq.>"); n != 0 {
		t.Errorf("%d dead letters", n)
	}
}

// TestWorker_a_Retry_publishes_its_wait_only_when_asked: an input the
// handler asks to Retry (it waits, nothing failed) publishes what Retrying
// builds when RetryingOnWait is set, and nothing without it; either way it
// is redelivered and never dead-lettered.
func TestWorker_a_Retry_publishes_its_wait_only_when_asked(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint(on), func(t *testing.T) {
			r := newRig(t, 5*time.Second, 10)
			r.publish(t, "in.x", "held")
			start(t, r, Config{
				RetryingOnWait: on,
				Retrying: func(m Msg, err error, a Attempt) []Output {
					return []Output{{Subject: fmt.Sprintf("out.wait.%d", a.N), Data: m.Data}}
				},
			}, func(ctx context.Context, m Msg) ([]Output, error) {
				if m.NumDelivered < 3 {
					return nil, Retry(5 * time.Millisecond)
				}
				return echo(ctx, m)
			})
			testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
				if n := r.count(t, "OUT", "out.held"); n != 1 {
					return fmt.Errorf("%d outputs", n)
				}
				return r.consumerIdle("stage")()
			})
			want := uint64(0)
			if on {
				want = 2
			}
			if n := r.count(t, "OUT", "out.wait.>"); n != want {
				t.Errorf("%d waits published, want %d", n, want)
			}
			if n := r.count(t, "OUT", "dlq.>"); n != 0 {
				t.Errorf("%d dead letters", n)
			}
		})
	}
}
