package worker

import (
	"errors"
	"fmt"
	"time"
)

// Error classifies a handler failure. A permanent one is dead-lettered and
// terminated at once; any other is retried with backoff until MaxDeliver,
// then dead-lettered.
type Error struct {
	Code      string        // the failure name in toolgate.dlq.<stage>.<code>
	Permanent bool          // retrying cannot help
	Delay     time.Duration // for transient errors: wait at least this long
	Err       error
}

func (e *Error) Error() string {
	kind := "transient"
	if e.Permanent {
		kind = "permanent"
	}
	return fmt.Sprintf("worker: %s %s: %v", kind, e.Code, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Permanent marks err as one that no retry can fix.
func Permanent(code string, err error) error {
	return &Error{Code: code, Permanent: true, Err: err}
}

// Transient marks err as worth retrying after at least delay (0: backoff).
func Transient(code string, delay time.Duration, err error) error {
	return &Error{Code: code, Delay: delay, Err: err}
}

// retry is the error Retry returns.
type retry struct{ delay time.Duration }

func (r *retry) Error() string { return fmt.Sprintf("worker: not done yet, retry in %v", r.delay) }

// Retry tells the worker that the input is not done yet and nothing failed:
// nak it for redelivery after delay (at least 1ms), without counting the
// delivery toward MaxDeliver and never dead-lettering it. Use it for inputs
// that wait on something else (a timer that bounces while a stream is open);
// their consumer must allow unlimited deliveries (MaxDeliver -1), or the
// server stops redelivering them.
func Retry(delay time.Duration) error { return &retry{delay: max(delay, time.Millisecond)} }

// retryAfter reports whether err is a Retry, and its delay.
func retryAfter(err error) (time.Duration, bool) {
	var r *retry
	if errors.As(err, &r) {
		return r.delay, true
	}
	return 0, false
}

// classify returns the failure code, whether err is permanent and the
// smallest delay asked for. An unclassified error is transient.
func classify(err error) (code string, permanent bool, delay time.Duration) {
	var we *Error
	if errors.As(err, &we) {
		return we.Code, we.Permanent, we.Delay
	}
	return "error", false, 0
}

// Backoff is the delay before redelivery number n (1-based): 250ms doubling,
// capped at 30s. A consumer's BackOff applies to ack timeouts only, not to
// naks, so the worker computes it here.
func Backoff(n uint64) time.Duration {
	d := 250 * time.Millisecond
	for i := uint64(1); i < n && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second)
}
