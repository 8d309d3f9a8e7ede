package bench

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Breakdown collects, from each result's history, the time between a call's
// consecutive transitions, keyed by the stage that made the later one — so
// a slow or queueing stage shows up by name.
type Breakdown struct {
	mu     sync.Mutex
	stages map[string][]time.Duration
}

func newBreakdown() *Breakdown { return &Breakdown{stages: map[string][]time.Duration{}} }

func (b *Breakdown) add(result []byte) {
	var r struct {
		History []struct {
			Stage string    `json:"stage"`
			At    time.Time `json:"at"`
		} `json:"history"`
	}
	if json.Unmarshal(result, &r) != nil || len(r.History) < 2 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := 1; i < len(r.History); i++ {
		s := r.History[i].Stage
		b.stages[s] = append(b.stages[s], r.History[i].At.Sub(r.History[i-1].At))
	}
}

// String prints p50 and p99 per stage, in pipeline order.
func (b *Breakdown) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	order := map[string]int{"parse": 1, "validate": 2, "business": 3, "policy": 4, "repair": 5, "execute": 6}
	names := make([]string, 0, len(b.stages))
	for s := range b.stages {
		names = append(names, s)
	}
	sort.Slice(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	var sb strings.Builder
	for _, s := range names {
		st := Stats{Latencies: b.stages[s]}
		fmt.Fprintf(&sb, "  %-10s p50 %6.2f ms  p99 %6.2f ms  (%d)\n", s,
			float64(st.Percentile(50))/1e6, float64(st.Percentile(99))/1e6, len(b.stages[s]))
	}
	return sb.String()
}
