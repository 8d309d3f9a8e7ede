package bench

import (
	"encoding/json"
	"os"
	"time"
)

// Report is every figure of one `toolgate bench` run, for comparing runs
// (--json). Durations are nanoseconds.
type Report struct {
	Machine   string         `json:"machine"`
	Started   time.Time      `json:"started"`
	Settings  map[string]any `json:"settings"`
	Runs      []RunFigures   `json:"runs"`
	Ceilings  []CeilingRun   `json:"ceilings"`
	Pipeline  Pipeline       `json:"pipeline"`
	Traffic   TrafficFigures `json:"traffic"`
	Tail      Tail           `json:"tail"`
	Scenarios []Cost         `json:"scenarios"`
	// StandStills: each step's longest stand-still of any stage.
	StandStills []StandStill `json:"stand_stills"`
	Cores       []CoreCost   `json:"cores"`
	// GatesPerCall is the parse, validate, business and policy cores together.
	GatesPerCall time.Duration `json:"gates_per_call_ns"`
	// TrustPerCall is toolgate's own trust work per valid call (seals,
	// their check, the request signature, a known token);
	// ExecutorTrust the executor's check of the signature (trust.go).
	TrustPerCall  time.Duration `json:"trust_per_call_ns"`
	ExecutorTrust time.Duration `json:"executor_trust_per_call_ns"`
	Goals         []Goal        `json:"goals"`

	// NATS is where the nats-server ran (NATSPlace); NoCounters, when
	// set, why its message counters could not be read: the messages per
	// call and NATS bytes per call are then 0 and printed as unavailable.
	NATS       NATSPlace `json:"nats"`
	NoCounters string    `json:"nats_counters_unavailable,omitempty"`
}

// RunFigures summarizes one measured run (ceiling, pipeline, offered load).
type RunFigures struct {
	Name        string        `json:"name"`
	Calls       int           `json:"calls"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	CallsPerSec float64       `json:"calls_per_s"`
	P50         time.Duration `json:"p50_ns"`
	P95         time.Duration `json:"p95_ns"`
	P99         time.Duration `json:"p99_ns"`
	Max         time.Duration `json:"max_ns"`
}

// Figures of s.
func (s Stats) Figures() RunFigures {
	return RunFigures{Name: s.Name, Calls: s.Count, Elapsed: s.Elapsed, CallsPerSec: s.Rate(),
		P50: s.Percentile(50), P95: s.Percentile(95), P99: s.Percentile(99), Max: s.Percentile(100)}
}

// CeilingRun is one layout's ceiling: the faster of its runs, and what a
// message asked of NATS in it.
type CeilingRun struct {
	Layout  string     `json:"layout"`
	Best    RunFigures `json:"best"`
	Rates   []float64  `json:"calls_per_s_each_run"`
	Traffic PerCall    `json:"traffic"`
}

// Pipeline is step 2's cost and the process's memory. PerCeiling is
// against the highest ceiling (the machine's), PerOneStream against the
// ceiling in the pipeline's own one-stream layout; LayoutPenalty is how
// much less the one-stream layout carries than the best, in percent.
type Pipeline struct {
	PerCeiling    float64 `json:"pipeline_per_ceiling_pct"`
	PerOneStream  float64 `json:"pipeline_per_one_stream_ceiling_pct"`
	LayoutPenalty float64 `json:"one_stream_layout_penalty_pct"`
	CPUPer1000    float64 `json:"cpu_s_per_1000_calls"`
	PeakRSS       int64   `json:"peak_rss_bytes"`                 // after steps 1-3
	PeakRSSLast   int64   `json:"peak_rss_after_scenarios_bytes"` // the large arguments raise it

	// NATSPeakRSS is a nats-server child process's peak RSS at the same
	// two points (0: embedded, in PeakRSS, or external, not measured).
	NATSPeakRSS     int64 `json:"nats_server_peak_rss_bytes,omitempty"`
	NATSPeakRSSLast int64 `json:"nats_server_peak_rss_after_scenarios_bytes,omitempty"`
}

// TrafficFigures is what one call asked of NATS in steps 1 and 2 (the
// pipeline: averaged over the bench's mix), and what that alone allows:
// the pipeline / ceiling ratio gates costing nothing would reach if every
// message (Bound) or every store (StoreBound) cost the same, in percent.
type TrafficFigures struct {
	Ceiling  PerCall `json:"ceiling"`
	Pipeline PerCall `json:"pipeline"`
	// Half is step 3's (the offered load): on a cluster, each node's CPU
	// per call at a second load beside the pipeline's maximum.
	Half PerCall `json:"half"`
}

// Bound is 100 * ceiling messages / pipeline messages, 0 when unknown.
func (t TrafficFigures) Bound() float64 {
	if t.Pipeline.Messages <= 0 {
		return 0
	}
	return 100 * t.Ceiling.Messages / t.Pipeline.Messages
}

// StoreBound is 100 * ceiling stores / pipeline stores, 0 when unknown.
func (t TrafficFigures) StoreBound() float64 {
	if t.Pipeline.Stores <= 0 {
		return 0
	}
	return 100 * t.Ceiling.Stores / t.Pipeline.Stores
}

// Tail is what step 3 shows about the tail: where each call's time went,
// GC in this process, and the load generator's own lateness.
type Tail struct {
	OfferedRate float64 `json:"offered_calls_per_s"`
	// CPUPer1000 is CPU per 1,000 calls at the offered load (process +
	// redis-server), beside step 2's at the maximum: a machine not saturated
	// shows what a call costs without the scheduler's busy-time in it.
	CPUPer1000 float64       `json:"cpu_s_per_1000_calls"`
	Stages     []StageRow    `json:"stages"`
	GC         GC            `json:"gc"`
	LateP50    time.Duration `json:"generator_late_p50_ns"`
	LateP99    time.Duration `json:"generator_late_p99_ns"`
	LateMax    time.Duration `json:"generator_late_max_ns"`
}

// Lateness fills the generator figures from a paced run.
func (t *Tail) Lateness(s Stats) {
	l := Stats{Latencies: s.Late}
	t.LateP50, t.LateP99, t.LateMax = l.Percentile(50), l.Percentile(99), l.Percentile(100)
}

// Write writes r as indented JSON to file.
func (r Report) Write(file string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}
