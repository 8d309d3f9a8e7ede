package bench

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// The burst's pass through parse is read from its calls' histories: the
// last parse step of each (a call parsed again after a repair has two), and
// none for a call that never reached parse.
func TestLastAt_is_a_calls_last_step_at_a_stage(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 13, 0, 0, 0, time.UTC)
	hist := []wire.Step{
		{Stage: streams.Accumulate, At: t0},
		{Stage: streams.Parse, At: t0.Add(10 * time.Millisecond)},
		{Stage: streams.Repair, At: t0.Add(20 * time.Millisecond)},
		{Stage: streams.Parse, At: t0.Add(30 * time.Millisecond)},
		{Stage: streams.Validate, At: t0.Add(40 * time.Millisecond)},
	}
	if got := lastAt(hist, streams.Parse); !got.Equal(t0.Add(30 * time.Millisecond)) {
		t.Fatalf("last parse step at %v, want t0+30ms", got.Sub(t0))
	}
	if got := lastAt(hist[:1], streams.Parse); !got.IsZero() {
		t.Fatalf("no parse step: %v, want zero", got)
	}
}

func TestSentBetween_keeps_the_calls_published_in_the_window(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 13, 0, 0, 0, time.UTC)
	sent := map[string]time.Time{"before": t0, "in": t0.Add(2 * time.Second), "after": t0.Add(5 * time.Second)}
	got := map[string]time.Time{"before": t0.Add(time.Second), "in": t0.Add(2*time.Second + 7*time.Millisecond), "after": t0.Add(6 * time.Second)}
	rids := []string{"before", "in", "after"}
	s := sentBetween(rids, sent, got, t0.Add(time.Second), t0.Add(4*time.Second))
	if s.Count != 1 || len(s.Latencies) != 1 || s.Latencies[0] != 7*time.Millisecond {
		t.Fatalf("window (1s, 4s): %d calls %v, want the one sent at 2s (7ms)", s.Count, s.Latencies)
	}
	if s := sentBetween(rids, sent, got, t0.Add(time.Second), time.Time{}); s.Count != 2 {
		t.Fatalf("no end: %d calls, want 2 (in, after)", s.Count)
	}
	if s := sentBetween(rids, sent, got, time.Time{}, time.Time{}); s.Count != 0 {
		t.Fatalf("never parsed: %d calls, want none", s.Count)
	}
}
