package bench

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/streams"
)

// Breakdown collects, from each result's history, the time between a call's
// consecutive transitions, keyed by the stage that made the later one — so
// a slow or queueing stage shows up by name. Two rows frame them:
// accumulate (the publish to the call's first transition) and result (the
// last transition to the result reaching the load generator); a call's rows
// add up to its end-to-end latency.
type Breakdown struct {
	mu     sync.Mutex
	stages map[string][]time.Duration
}

// RowResult is the name of the last row: the last transition to arrival.
const RowResult = "result"

func newBreakdown() *Breakdown { return &Breakdown{stages: map[string][]time.Duration{}} }

func (b *Breakdown) add(result []byte, sent, arrived time.Time) {
	var r struct {
		History []struct {
			Stage string    `json:"stage"`
			At    time.Time `json:"at"`
		} `json:"history"`
	}
	if json.Unmarshal(result, &r) != nil || len(r.History) == 0 {
		return
	}
	// One figure per call and stage: a stage that records two transitions
	// (execute: executing, then executed) is the sum of both steps.
	per := map[string]time.Duration{r.History[0].Stage: r.History[0].At.Sub(sent)}
	for i := 1; i < len(r.History); i++ {
		per[r.History[i].Stage] += r.History[i].At.Sub(r.History[i-1].At)
	}
	per[RowResult] = arrived.Sub(r.History[len(r.History)-1].At)
	b.mu.Lock()
	defer b.mu.Unlock()
	for s, d := range per {
		b.stages[s] = append(b.stages[s], d)
	}
}

// StageRow is one stage at the offered load. Step is the history's time
// from the previous transition to this stage's; Handler is the stage's own
// handler time (the worker's Observe hook, a histogram: its p99 is
// interpolated inside a bucket); Wait is Step's mean less Handler's mean:
// the publish, the store, the fetch and the queue in front of the handler.
type StageRow struct {
	Stage       string        `json:"stage"`
	Calls       int           `json:"calls"`
	StepP50     time.Duration `json:"step_p50_ns"`
	StepP99     time.Duration `json:"step_p99_ns"`
	StepMean    time.Duration `json:"step_mean_ns"`
	Handled     uint64        `json:"handler_runs"`
	HandlerMean time.Duration `json:"handler_mean_ns"`
	HandlerP99  time.Duration `json:"handler_p99_ns"`
	WaitMean    time.Duration `json:"wait_mean_ns"`
}

// Rows are the stages in pipeline order, joined with h (nil: no handler
// figures).
func (b *Breakdown) Rows(h HandlerTimes) []StageRow {
	b.mu.Lock()
	defer b.mu.Unlock()
	order := map[string]int{RowResult: 99}
	for i, s := range streams.Names() {
		order[s] = i + 1
	}
	names := make([]string, 0, len(b.stages))
	for s := range b.stages {
		names = append(names, s)
	}
	sort.Slice(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	rows := make([]StageRow, 0, len(names))
	for _, s := range names {
		st := Stats{Latencies: b.stages[s]}
		row := StageRow{Stage: s, Calls: len(st.Latencies), StepP50: st.Percentile(50), StepP99: st.Percentile(99), StepMean: mean(st.Latencies)}
		if hs, ok := h[s]; ok && hs.Count > 0 {
			row.Handled, row.HandlerMean, row.HandlerP99 = hs.Count, hs.Mean(), hs.Quantile(0.99)
			row.WaitMean = row.StepMean - row.HandlerMean
		}
		rows = append(rows, row)
	}
	return rows
}

// String prints p50 and p99 per stage, in pipeline order.
func (b *Breakdown) String() string { return FormatRows(b.Rows(nil)) }

// FormatRows prints rows as a table.
func FormatRows(rows []StageRow) string {
	var sb strings.Builder
	sb.WriteString("| stage | calls | step p50 | step p99 | step mean | handler mean | handler p99 | wait mean |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		h, hp, w := "–", "–", "–"
		if r.Handled > 0 {
			h, hp, w = msec(r.HandlerMean), msec(r.HandlerP99), msec(r.WaitMean)
		}
		fmt.Fprintf(&sb, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", r.Stage, r.Calls, msec(r.StepP50), msec(r.StepP99), msec(r.StepMean), h, hp, w)
	}
	return sb.String()
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

func msec(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
