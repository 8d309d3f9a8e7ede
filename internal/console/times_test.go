package console

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestQuantile_interpolates_within_a_bucket_as_histogram_quantile(t *testing.T) {
	bs := []bucket{{le: .001, count: 0}, {le: .01, count: 50}, {le: .1, count: 100}, {le: math.Inf(1), count: 100}}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{.5, 10 * time.Millisecond},
		{.25, 5500 * time.Microsecond},
		{.99, 98200 * time.Microsecond},
	} {
		if got := quantile(bs, c.q); (got - c.want).Abs() > time.Microsecond {
			t.Errorf("q%.2f = %v, want %v", c.q, got, c.want)
		}
	}
}

func TestHandleTimes_from_the_histogram_window_since_the_last_refresh(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: handleHistogram, Buckets: []float64{.001, .01, .1, 1}}, []string{"stage", "result"})
	reg.MustRegister(h)
	for range 100 {
		h.WithLabelValues("parse", "ok").Observe(.0005) // fast, before the first refresh
	}
	c := &overviewCache{}
	first, _ := c.fromHistogram(reg.Gather)
	if first["parse"][1] > time.Millisecond {
		t.Fatalf("first refresh p99 %v, want under 1ms", first["parse"][1])
	}
	for range 10 {
		h.WithLabelValues("parse", "error").Observe(.5) // slow, since
	}
	next, _ := c.fromHistogram(reg.Gather)
	if p50 := next["parse"][0]; p50 < 100*time.Millisecond {
		t.Fatalf("p50 since the last refresh %v: the window must hold only the slow calls", p50)
	}
}
