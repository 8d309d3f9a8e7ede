package bench

import (
	"context"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Ceilings measures the ceiling in every layout of Layouts, each twice in
// the order A B B A so that neither layout always runs first on a warm or a
// cold machine, and returns one CeilingRun per layout: the faster of its
// runs (a ceiling is an upper bound) and its traffic per message. parts > 1
// adds Partitioned(parts).
func Ceilings(ctx context.Context, s Counters, nc *nats.Conn, js jetstream.JetStream, n, size int, storage Storage, parts ...int) ([]CeilingRun, error) {
	layouts := Layouts(parts...)
	back := slices.Clone(layouts)
	slices.Reverse(back)
	order := append(slices.Clone(layouts), back...)
	runs := make([]CeilingRun, len(layouts))
	for _, l := range order {
		t0, err := ReadTraffic(ctx, s, js)
		if err != nil {
			return nil, err
		}
		st, err := Ceiling(ctx, nc, js, n, size, storage, l)
		if err != nil {
			return nil, err
		}
		if st.Duplicates > 0 { // a hop delivered twice: the worker is broken, not slow
			return nil, fmt.Errorf("bench: ceiling, %s: %d duplicate arrivals", l, st.Duplicates)
		}
		t1, err := ReadTraffic(ctx, s, js)
		if err != nil {
			return nil, err
		}
		tr := t1.Since(t0)
		tr.Stores = st.Stored // its streams are gone by now
		tr.Cluster = nil      // and so are their replicas' stores on each node
		r := &runs[slices.Index(layouts, l)]
		r.Layout = l.String()
		r.Rates = append(r.Rates, st.Rate())
		if st.Rate() > r.Best.CallsPerSec {
			r.Best, r.Traffic = st.Figures(), tr.Per(st.Count)
		}
	}
	return runs, nil
}

// Highest is the run with the highest rate.
func Highest(runs []CeilingRun) CeilingRun {
	var best CeilingRun
	for _, r := range runs {
		if r.Best.CallsPerSec > best.Best.CallsPerSec {
			best = r
		}
	}
	return best
}
