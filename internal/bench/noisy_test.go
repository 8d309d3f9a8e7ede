package bench_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/benchrig"
	"github.com/toolgate/toolgate/streams"
)

// The burst alone (QuietRate 0), the reference the noisy-neighbour and
// priority scenarios' drain rates are a share of: every call of the burst
// has one result, none of a quiet tenant is sent, and the drain rate is a
// figure.
func TestNeighbour_the_burst_alone_is_the_reference(t *testing.T) {
	r, err := benchrig.Start(benchrig.Options{Dir: t.TempDir(), ToolsFile: "../../examples/tools.yaml", Fair: streams.Fair{Tenants: []string{"noisy", "quiet"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("pipeline: %v", err)
		}
	})
	f, err := bench.Neighbour{BurstTenant: "noisy", Burst: 40}.Run(context.Background(), r.NC, r.JS, "ref-")
	if err != nil {
		t.Fatal(err)
	}
	if f.Lost != 0 || f.Twice != 0 || f.Burst.Count != 40 {
		t.Fatalf("burst of %d: lost %d, twice %d", f.Burst.Count, f.Lost, f.Twice)
	}
	if n := f.QuietAlone.Count + f.QuietDuring.Count; n != 0 {
		t.Errorf("%d quiet calls measured with no quiet tenant", n)
	}
	positive(t, "the burst's drain rate", f.Burst.Rate())
}
