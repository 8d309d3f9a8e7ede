package bench

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

// One stream per hop: each hop's consumer reads its own stream, so a
// message must really pass all seven streams to arrive.
func TestCeiling_stream_per_hop_stores_each_hop_in_its_own_stream(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	ctx := context.Background()
	st, err := Ceiling(ctx, nc, js, 100, 128, FileStorage(1), StreamPerHop)
	if err != nil {
		t.Fatal(err)
	}
	if st.Count != 100 || len(st.Latencies) != 100 || st.Stored != 100*Hops || st.Duplicates != 0 {
		t.Fatalf("ceiling stats: count %d, %d latencies, %d stored, %d duplicates; want 100, 100, %d, 0", st.Count, len(st.Latencies), st.Stored, st.Duplicates, 100*Hops)
	}
	if got := StreamPerHop.streams(); len(got) != Hops || got[3].subjects[0] != hopSubject(3) || StreamPerHop.stream(3) != got[3].name {
		t.Fatalf("per-hop streams %v", got)
	}
	if names := js.StreamNames(ctx); names.Err() == nil {
		for n := range names.Name() {
			t.Fatalf("stream %s left behind", n)
		}
	}
}

// Ceilings measures each layout twice, A B B A, keeps the faster run of
// each, and Highest picks the layout with the higher best.
func TestCeilings_each_layout_twice_and_the_highest(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	runs, err := Ceilings(context.Background(), Embedded{S: s}, nc, js, 100, 128, FileStorage(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(Layouts()) {
		t.Fatalf("%d runs, want one per layout", len(runs))
	}
	for i, r := range runs {
		if r.Layout != Layouts()[i].String() || len(r.Rates) != 2 || r.Best.Calls != 100 || r.Traffic.Stores != Hops {
			t.Fatalf("run %d: %+v", i, r)
		}
		if r.Best.CallsPerSec != max(r.Rates[0], r.Rates[1]) {
			t.Fatalf("%s: best %v of %v", r.Layout, r.Best.CallsPerSec, r.Rates)
		}
	}
	hi := Highest([]CeilingRun{{Layout: "a", Best: RunFigures{CallsPerSec: 5}}, {Layout: "b", Best: RunFigures{CallsPerSec: 7}}, {Layout: "c", Best: RunFigures{CallsPerSec: 6}}})
	if hi.Layout != "b" {
		t.Fatalf("highest %q, want b", hi.Layout)
	}
}

// BenchmarkCeiling pushes b.N messages of 1 KiB through the hops in each
// layout; with -cpuprofile it shows where the embedded server spends the
// difference (README, "Why one stream costs").
func BenchmarkCeiling(b *testing.B) {
	for _, layout := range Layouts() {
		b.Run(layout.String(), func(b *testing.B) {
			s := testenv.RunJetStream(b)
			nc, js := testenv.Connect(b, s)
			b.ResetTimer()
			st, err := Ceiling(context.Background(), nc, js, max(b.N, 100), 1024, FileStorage(1), layout)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(st.Rate(), "msgs/s")
		})
	}
}
