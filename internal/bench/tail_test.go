package bench

import (
	"math"
	"runtime"
	"testing"
	"time"
)

func TestHisto_quantile_interpolates_inside_its_bucket(t *testing.T) {
	h := Histo{Count: 100, Sum: 1, Upper: []float64{.001, .01, math.Inf(1)}, Counts: []uint64{50, 90, 100}}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0.25, 500 * time.Microsecond},
		{0.5, time.Millisecond},
		{0.7, 5500 * time.Microsecond},
		{0.99, 10 * time.Millisecond}, // past the last finite bucket: its bound
	} {
		if got := h.Quantile(c.q); got != c.want {
			t.Errorf("q%v = %v, want %v", c.q, got, c.want)
		}
	}
	if h.Mean() != 10*time.Millisecond {
		t.Errorf("mean %v", h.Mean())
	}
	d := HandlerTimes{"parse": h}.Sub(HandlerTimes{"parse": {Count: 50, Sum: .5, Upper: h.Upper, Counts: []uint64{50, 50, 50}}})["parse"]
	if d.Count != 50 || d.Counts[0] != 0 || d.Counts[1] != 40 || d.Quantile(0.5) != 6625*time.Microsecond {
		t.Errorf("difference %+v", d)
	}
}

func TestGC_counts_a_forced_collection(t *testing.T) {
	before := ReadGC()
	runtime.GC()
	g := ReadGC().Since(before)
	if g.Cycles < 1 || g.Pauses < 1 || g.PauseTotal <= 0 || g.PauseMax <= 0 {
		t.Fatalf("after runtime.GC: %+v", g)
	}
}

func TestGoals_judge_each_figure_by_its_direction(t *testing.T) {
	g := Goals(Figures{PipelinePerCeiling: 80, HalfP99Ms: 25, CPUPer1000s: 0.40, PeakRSSMiB: 151, GatesPerCallUs: 49})
	want := []bool{true, false, true, false, true}
	for i, w := range want {
		if g[i].Met != w {
			t.Errorf("%s %v: met %v, want %v", g[i].Figure, g[i].Value, g[i].Met, w)
		}
	}
}

func TestTrafficFigures_bounds_are_the_ceilings_share(t *testing.T) {
	tr := TrafficFigures{Ceiling: PerCall{Messages: 27, Stores: 7}, Pipeline: PerCall{Messages: 36, Stores: 10}}
	if tr.Bound() != 75 || tr.StoreBound() != 70 {
		t.Fatalf("bounds %v %v, want 75 70", tr.Bound(), tr.StoreBound())
	}
	if (TrafficFigures{}).Bound() != 0 || (TrafficFigures{}).StoreBound() != 0 {
		t.Fatal("no traffic must give no bound, not NaN")
	}
}

func TestSched_counts_goroutines_that_waited_to_run(t *testing.T) {
	before := ReadSched()
	done := make(chan struct{})
	for range 4 * runtime.GOMAXPROCS(0) {
		go func() {
			for range 1000 {
				runtime.Gosched()
			}
			done <- struct{}{}
		}()
	}
	for range 4 * runtime.GOMAXPROCS(0) {
		<-done
	}
	h := ReadSched().Since(before)
	if h.Count == 0 || len(h.Upper) != len(h.Counts) || h.Counts[len(h.Counts)-1] != h.Count || h.Quantile(0.99) < h.Quantile(0.5) {
		t.Fatalf("after yielding goroutines: %+v", h)
	}
}
