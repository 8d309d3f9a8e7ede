package shadow

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
)

// BenchmarkObserve is what the policy gate pays per call beyond its own
// verdict: none, with no shadow applied; the shadow's validate, business
// and policy gates and a counter update, with one.
func BenchmarkObserve(b *testing.B) {
	t := &testing.T{}
	in := envelope(t, "get_weather", `{"city":"Oslo"}`, "ops")
	out := in
	_ = out.Move("policy", call.Approved, time.Now())
	outs := []call.Envelope{out}
	for _, armedToo := range []bool{false, true} {
		c := &Comparer{Tally: &Tally{}, log: zerolog.Nop(), now: time.Now}
		name := "no_shadow"
		if armedToo {
			a, err := compile(Revision{ID: "s1", Tools: load(t, tighter)})
			if err != nil {
				b.Fatal(err)
			}
			c.arm(a)
			name = "shadow"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Observe(context.Background(), in, outs)
			}
		})
	}
}
