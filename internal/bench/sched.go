package bench

import (
	"math"
	"runtime/metrics"
)

// schedLatencies is the runtime's histogram of how long goroutines waited
// runnable before they ran: in a bench whose stages, NATS server and load
// share one process, a call's every hop is a goroutine waking, so this is
// the part of each step spent waiting for a CPU rather than for work ahead
// of it in a queue.
const schedLatencies = "/sched/latencies:seconds"

// SchedSnapshot is the scheduler's latency histogram at one moment.
type SchedSnapshot struct {
	counts  []uint64
	buckets []float64
}

// ReadSched reads the scheduler's latency histogram now.
func ReadSched() SchedSnapshot {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return SchedSnapshot{}
	}
	h := s[0].Value.Float64Histogram()
	return SchedSnapshot{counts: append([]uint64(nil), h.Counts...), buckets: append([]float64(nil), h.Buckets...)}
}

// Since is what goroutines waited to run between before and s, as a Histo
// (Quantile; Sum counts each wait at its bucket's midpoint).
func (s SchedSnapshot) Since(before SchedSnapshot) Histo {
	var h Histo
	for i, c := range s.counts {
		if i < len(before.counts) {
			c -= before.counts[i]
		}
		if i+1 >= len(s.buckets) {
			break
		}
		lo, hi := s.buckets[i], s.buckets[i+1]
		h.Count += c
		h.Upper = append(h.Upper, hi)
		h.Counts = append(h.Counts, h.Count)
		if c > 0 && !math.IsInf(hi, 1) {
			h.Sum += float64(c) * (max(lo, 0) + hi) / 2
		}
	}
	return h
}
