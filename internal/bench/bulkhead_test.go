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
