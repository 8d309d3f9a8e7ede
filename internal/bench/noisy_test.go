package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

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

// The quiet tenant publishes on its own connection when given one, as its
// own producer would (its calls are not read by the server behind the
// burst's on one socket), and each has its result.
func TestNeighbour_the_quiet_tenant_publishes_on_its_own_connection(t *testing.T) {
	r, err := benchrig.Start(benchrig.Options{Dir: t.TempDir(), ToolsFile: "../../examples/tools.yaml", Fair: streams.Fair{Tenants: []string{"noisy", "quiet"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("pipeline: %v", err)
		}
	})
	quiet, err := nats.Connect(r.NATS.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	f, err := bench.Neighbour{QuietTenant: "quiet", BurstTenant: "noisy", QuietRate: 50, Alone: 300 * time.Millisecond, Burst: 20, QuietConn: quiet}.Run(context.Background(), r.NC, r.JS, "own-")
	if err != nil {
		t.Fatal(err)
	}
	if f.Lost != 0 || f.Twice != 0 {
		t.Fatalf("lost %d, twice %d", f.Lost, f.Twice)
	}
	sent := f.QuietAlone.Count + f.QuietDuring.Count
	if sent == 0 {
		t.Fatal("no quiet call measured")
	}
	if p, st, d := f.QuietPublishing.Count, f.QuietStored.Count, f.QuietDuring.Count; p+st != d {
		t.Errorf("quiet calls during the burst: %d while it was published and %d once stored, of %d", p, st, d)
	}
	if got := quiet.Stats().OutMsgs; got < uint64(sent) {
		t.Errorf("the quiet connection sent %d messages for %d quiet calls", got, sent)
	}
}
