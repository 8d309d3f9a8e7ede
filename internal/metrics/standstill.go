package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// standStills is toolgate_stage_stand_still_seconds and the longest
// stand-still of each stage since it was last taken (the bench's per-step
// figure, exact where the histogram has buckets).
type standStills struct {
	hist    *prometheus.HistogramVec
	mu      sync.Mutex
	longest map[string]time.Duration
}

// newStandStills registers toolgate_stage_stand_still_seconds on reg.
func newStandStills(reg *prometheus.Registry) *standStills {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "toolgate_stage_stand_still_seconds",
		Help:    "Times of at least 1 ms a stage's worker was ready for input while input waited on its consumer and none was delivered, by stage. A pull that stood still (a lost or skipped pull request) shows in the top buckets.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"stage"})
	reg.MustRegister(h)
	return &standStills{hist: h, longest: map[string]time.Duration{}}
}

// Gap records one stand-still of stage; it fits worker.Config.Gap.
func (m *Metrics) Gap(stage string, d time.Duration) {
	s := m.standStills
	s.hist.WithLabelValues(stage).Observe(d.Seconds())
	s.mu.Lock()
	if d > s.longest[stage] {
		s.longest[stage] = d
	}
	s.mu.Unlock()
}

// TakeLongestGaps returns each stage's longest stand-still since the last
// call (stages without one are absent) and starts over.
func (m *Metrics) TakeLongestGaps() map[string]time.Duration {
	s := m.standStills
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.longest
	s.longest = map[string]time.Duration{}
	return out
}
