package ingest

import (
	"testing"

	"github.com/toolgate/toolgate/internal/provider"
)

// BenchmarkAssembly_terminal_events_behind_a_gap: seq 1, then 2,000
// terminal events behind a missing seq 2, each added and judged as a settle
// does. The cost per event stays flat (it grew with the stream before).
func BenchmarkAssembly_terminal_events_behind_a_gap(b *testing.B) {
	evs := []event{{seq: 1, data: []byte(anthropicStart)}}
	for i := range 2000 {
		evs = append(evs, event{seq: i + 3, data: []byte(anthropicStop)})
	}
	st := stored(provider.Anthropic, evs...)
	b.ReportAllocs()
	for b.Loop() {
		asm := newAssembly(DefaultMaxStreamEvents, nil)
		for i, ev := range st {
			asm.add(ev)
			if i > 0 && !asm.gap() {
				b.Fatal("no gap")
			}
		}
		_ = asm.why(DefaultIdleTimeout)
	}
}
