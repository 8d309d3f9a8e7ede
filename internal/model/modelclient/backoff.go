package modelclient

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// baseBackoff is the wait before the first retry when the server gave no
// Retry-After; each further retry doubles it, up to Config.MaxBackoff.
const baseBackoff = 500 * time.Millisecond

// backoff returns the wait before retry number n (1-based): exponential from
// baseBackoff, capped at max, with "equal jitter" (a uniform draw in the upper
// half) so replicas that failed together do not retry together. r is a draw
// in [0, 1).
func backoff(n int, max time.Duration, r float64) time.Duration {
	d := baseBackoff
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	half := d / 2
	return half + time.Duration(r*float64(d-half))
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110 section 10.2.3). ok is false when the header is absent or
// unreadable; a date in the past means no wait.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		// Bound before multiplying so a huge value cannot overflow.
		if secs > int64(365*24*time.Hour/time.Second) {
			secs = int64(365 * 24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}
