package bench

import (
	"math"
	"time"

	"github.com/toolgate/toolgate/internal/metrics"
)

// handleMetric is the histogram the worker's Observe hook fills
// (internal/metrics): one observation per handler run, by stage.
const handleMetric = "toolgate_stage_handle_seconds"

// Histo is one stage's handler-time histogram (cumulative buckets).
type Histo struct {
	Count  uint64
	Sum    float64 // seconds
	Upper  []float64
	Counts []uint64 // cumulative, one per Upper
}

// HandlerTimes are the handler-time histograms by stage.
type HandlerTimes map[string]Histo

// ReadHandlerTimes reads the stages' handler times so far from m (ok and
// error runs together).
func ReadHandlerTimes(m *metrics.Metrics) (HandlerTimes, error) {
	fams, err := m.Registry().Gather()
	if err != nil {
		return nil, err
	}
	out := HandlerTimes{}
	for _, f := range fams {
		if f.GetName() != handleMetric {
			continue
		}
		for _, mt := range f.GetMetric() {
			stage := ""
			for _, l := range mt.GetLabel() {
				if l.GetName() == "stage" {
					stage = l.GetValue()
				}
			}
			h := mt.GetHistogram()
			cur := out[stage]
			if cur.Upper == nil {
				for _, b := range h.GetBucket() {
					cur.Upper = append(cur.Upper, b.GetUpperBound())
				}
				cur.Counts = make([]uint64, len(cur.Upper))
			}
			cur.Count += h.GetSampleCount()
			cur.Sum += h.GetSampleSum()
			for i, b := range h.GetBucket() {
				if i < len(cur.Counts) {
					cur.Counts[i] += b.GetCumulativeCount()
				}
			}
			out[stage] = cur
		}
	}
	return out, nil
}

// Sub returns what was observed after before was read.
func (h HandlerTimes) Sub(before HandlerTimes) HandlerTimes {
	out := HandlerTimes{}
	for s, a := range h {
		b := before[s]
		d := Histo{Count: a.Count - b.Count, Sum: a.Sum - b.Sum, Upper: a.Upper, Counts: make([]uint64, len(a.Counts))}
		for i := range a.Counts {
			d.Counts[i] = a.Counts[i]
			if i < len(b.Counts) {
				d.Counts[i] -= b.Counts[i]
			}
		}
		out[s] = d
	}
	return out
}

// Mean is the mean handler time.
func (h Histo) Mean() time.Duration {
	if h.Count == 0 {
		return 0
	}
	return time.Duration(h.Sum / float64(h.Count) * float64(time.Second))
}

// Quantile interpolates the q-th quantile inside its bucket, as
// Prometheus's histogram_quantile does; past the last bucket it is that
// bucket's bound.
func (h Histo) Quantile(q float64) time.Duration {
	if h.Count == 0 {
		return 0
	}
	rank := q * float64(h.Count)
	lower, below := 0.0, uint64(0)
	for i, up := range h.Upper {
		if float64(h.Counts[i]) >= rank {
			if math.IsInf(up, 1) {
				break
			}
			v := up
			if in := float64(h.Counts[i] - below); in > 0 {
				v = lower + (up-lower)*(rank-float64(below))/in
			}
			return time.Duration(v * float64(time.Second))
		}
		lower, below = up, h.Counts[i]
	}
	return time.Duration(lower * float64(time.Second))
}
