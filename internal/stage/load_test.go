package stage

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/bench"
)

// The benchmark's load mix through the whole pipeline: every response ends
// with exactly one result (bench.Load fails on a duplicate or a missing one).
func TestPipeline_bench_mix_yields_one_result_per_response(t *testing.T) {
	p := startPipeline(t)
	st, err := bench.Load(context.Background(), p.nc, p.js, "mix-", 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Count != 100 || len(st.Latencies) != 100 {
		t.Fatalf("stats %v", st)
	}
	// 2 of every 5 kinds are valid native calls and 1 is text-recovered:
	// each runs the executor exactly once.
	if got := p.executed.Load(); got != 60 {
		t.Fatalf("executed %d calls, want 60 (valid and text-recovered, once each)", got)
	}
}
