// Package bench measures toolgate: the ceiling of seven chained JetStream
// hops with no gate logic, the full pipeline's throughput and latency, and
// latency at a fixed offered load. `toolgate bench` runs them in one run.
package bench

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Stats summarizes one measured run.
type Stats struct {
	Name      string
	Count     int
	Elapsed   time.Duration
	Latencies []time.Duration // end to end, one per message
	// Late is, for a paced run, how late each publish left against its
	// schedule (the load generator's own lateness); nil when not paced.
	Late []time.Duration
	// Stored is how many messages JetStream stored during the run, when the
	// run knows it itself (the ceiling: its stream's last sequence, read
	// before the stream is deleted); 0: see ReadTraffic.
	Stored int64
	// Duplicates is how many arrivals repeated one before them or carried
	// an id never sent, when the run counts them itself (the ceiling).
	Duplicates int
}

// Rate is messages (calls) per second.
func (s Stats) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Count) / s.Elapsed.Seconds()
}

// Percentile returns the p-th percentile latency (0 < p <= 100).
func (s Stats) Percentile(p float64) time.Duration {
	if len(s.Latencies) == 0 {
		return 0
	}
	l := append([]time.Duration(nil), s.Latencies...)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	i := int(p/100*float64(len(l))+0.5) - 1
	i = max(0, min(i, len(l)-1))
	return l[i]
}

func (s Stats) String() string {
	return fmt.Sprintf("%s: %d in %v = %.0f/s, p50 %v p95 %v p99 %v", s.Name, s.Count, s.Elapsed.Round(time.Millisecond),
		s.Rate(), s.Percentile(50).Round(10*time.Microsecond), s.Percentile(95).Round(10*time.Microsecond), s.Percentile(99).Round(10*time.Microsecond))
}

// recorder collects arrival latencies keyed by an id.
type recorder struct {
	mu      sync.Mutex
	sent    map[string]time.Time
	lat     []time.Duration
	done    chan struct{}
	want    int
	last    time.Time
	dupes   int
	unknown int
}

func newRecorder(want int) *recorder {
	return &recorder{sent: make(map[string]time.Time, want), done: make(chan struct{}), want: want}
}

func (r *recorder) sentAt(id string, t time.Time) {
	r.mu.Lock()
	r.sent[id] = t
	r.mu.Unlock()
}

// arrived records id's arrival at t and returns when it was sent; ok is
// false for an id never sent, or one that arrived before (a duplicate).
func (r *recorder) arrived(id string, t time.Time) (sent time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	start, known := r.sent[id]
	if !known {
		r.unknown++
		return time.Time{}, false
	}
	if start.IsZero() {
		r.dupes++
		return time.Time{}, false
	}
	r.sent[id] = time.Time{}
	r.lat = append(r.lat, t.Sub(start))
	r.last = t
	if len(r.lat) == r.want {
		close(r.done)
	}
	return start, true
}

// counts returns how many ids arrived, arrived again, or were never sent.
func (r *recorder) counts() (arrived, dupes, unknown int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lat), r.dupes, r.unknown
}
