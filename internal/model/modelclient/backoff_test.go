package modelclient

import (
	"testing"
	"time"
)

func TestBackoff_doubles_with_jitter_and_caps(t *testing.T) {
	for _, tc := range []struct {
		n    int
		max  time.Duration
		r    float64
		want time.Duration
	}{
		{1, 20 * time.Second, 0, 250 * time.Millisecond},
		{1, 20 * time.Second, 0.999999, 499999750 * time.Nanosecond},
		{2, 20 * time.Second, 0, 500 * time.Millisecond},
		{3, 20 * time.Second, 0.5, 1500 * time.Millisecond},
		{10, 20 * time.Second, 0, 10 * time.Second},
		{100, 3 * time.Second, 0.5, 2250 * time.Millisecond},
	} {
		if got := backoff(tc.n, tc.max, tc.r); got != tc.want {
			t.Errorf("backoff(%d, %s, %v) = %s, want %s", tc.n, tc.max, tc.r, got, tc.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v      string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"12", 12 * time.Second, true},
		{"-3", 0, false},
		{"soon", 0, false},
		{"Mon, 30 Nov 2026 10:00:30 GMT", 30 * time.Second, true},
		{"Mon, 30 Nov 2026 09:00:00 GMT", 0, true},
		{"99999999999999999", 365 * 24 * time.Hour, true},
	} {
		got, ok := parseRetryAfter(tc.v, now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("parseRetryAfter(%q) = %s, %v; want %s, %v", tc.v, got, ok, tc.want, tc.wantOK)
		}
	}
}
