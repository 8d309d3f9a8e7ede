package bench

import (
	"math"
	"runtime/metrics"
	"time"
)

// GC is the garbage collector's work in this process over a window:
// cycles, and stop-the-world pauses for GC from the runtime's histogram
// (/sched/pauses/total/gc:seconds). The histogram keeps buckets, not
// pauses: Total counts each pause at its bucket's midpoint and Max is the
// upper bound of the highest bucket that holds one.
type GC struct {
	Cycles     uint64        `json:"cycles"`
	Pauses     uint64        `json:"pauses"`
	PauseTotal time.Duration `json:"pause_total_ns"`
	PauseMax   time.Duration `json:"pause_max_ns"`
}

const (
	gcCycles = "/gc/cycles/total:gc-cycles"
	gcPauses = "/sched/pauses/total/gc:seconds"
)

// GCSnapshot is the runtime's GC counters at one moment.
type GCSnapshot struct {
	cycles  uint64
	counts  []uint64
	buckets []float64
}

// ReadGC reads the GC counters now.
func ReadGC() GCSnapshot {
	s := []metrics.Sample{{Name: gcCycles}, {Name: gcPauses}}
	metrics.Read(s)
	var g GCSnapshot
	if s[0].Value.Kind() == metrics.KindUint64 {
		g.cycles = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindFloat64Histogram {
		h := s[1].Value.Float64Histogram()
		g.counts = append([]uint64(nil), h.Counts...)
		g.buckets = append([]float64(nil), h.Buckets...)
	}
	return g
}

// Since is the GC work between before and g.
func (g GCSnapshot) Since(before GCSnapshot) GC {
	out := GC{Cycles: g.cycles - before.cycles}
	var total float64
	for i, c := range g.counts {
		if i < len(before.counts) {
			c -= before.counts[i]
		}
		if c == 0 || i+1 >= len(g.buckets) {
			continue
		}
		lo, hi := g.buckets[i], g.buckets[i+1]
		if math.IsInf(lo, -1) {
			lo = 0
		}
		if math.IsInf(hi, 1) {
			hi = lo
		}
		out.Pauses += c
		total += float64(c) * (lo + hi) / 2
		out.PauseMax = time.Duration(hi * float64(time.Second))
	}
	out.PauseTotal = time.Duration(total * float64(time.Second))
	return out
}
