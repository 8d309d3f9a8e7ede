// Package metrics holds toolgate's Prometheus metrics: the seed's tool-call
// counters, a handler-latency histogram per stage and the pending work of
// each stage's consumer, served on /metrics of every process.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// Metrics is one process's set of collectors on its own registry (no
// global state: two pipelines in one test binary do not share counts).
type Metrics struct {
	reg *prometheus.Registry

	calls          *prometheus.CounterVec
	invalidJSON    *prometheus.CounterVec
	schemaInvalid  *prometheus.CounterVec
	truncated      *prometheus.CounterVec
	repairAttempts *prometheus.CounterVec
	execFailed     *prometheus.CounterVec
	stageSeconds   *prometheus.HistogramVec
	malformed      *prometheus.CounterVec // records.go
	// sealInvalidTotal: seal.go
	sealInvalidTotal *prometheus.CounterVec
	deadLetters      *prometheus.CounterVec // deadletters.go
	known            known                  // known.go
	standStills      *standStills           // standstill.go
	dwell            *dwell                 // dwell.go
	limits           limits                 // limits.go
	circuits         *prometheus.CounterVec // execgroups.go
}

// labels of every tool-call counter. outcome is the status the transition
// recorded; for a call that ended failed, its failure class (the same value
// as the dead-letter subject's last token).
func labels() []string { return []string{"tool", "provider", "outcome"} }

// New registers toolgate's collectors, plus the Go runtime and process
// collectors, on a fresh registry, with every alerted series whose labels
// are known ahead already at zero (zero.go).
func New() *Metrics {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels())
	}
	m := &Metrics{
		reg:            prometheus.NewRegistry(),
		calls:          counter("llm_tool_call_total", "Tool calls that reached a terminal outcome, by outcome (executed, dry_run, or the failure class)."),
		invalidJSON:    counter("llm_tool_call_invalid_json_total", "Calls the parse gate classified invalid_json."),
		schemaInvalid:  counter("llm_tool_call_schema_invalid_total", "Calls the validate gate classified schema_invalid."),
		truncated:      counter("llm_tool_call_truncated_total", "Calls whose arguments were classified truncated."),
		repairAttempts: counter("llm_tool_call_repair_attempts_total", "Repair attempts made by the repair gate, by what the attempt led to (received: repaired)."),
		execFailed:     counter("llm_tool_call_execution_failed_total", "Calls whose executor ran and reported an error."),
		stageSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolgate_stage_handle_seconds",
			Help:    "Time a stage's handler took for one input, by stage and result (ok or error).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"stage", "result"}),
	}
	m.reg.MustRegister(m.calls, m.invalidJSON, m.schemaInvalid, m.truncated, m.repairAttempts, m.execFailed, m.stageSeconds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.malformed = newMalformedRecords(m.reg)
	m.sealInvalidTotal = newSealInvalid(m.reg)
	m.deadLetters = newDeadLettersTotal(m.reg)
	m.standStills = newStandStills(m.reg)
	m.dwell = newDwell(m.reg)
	m.limits = newLimits(m.reg)
	m.circuits = newCircuitTransitions(m.reg)
	m.zero() // zero.go
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.touch()
		h.ServeHTTP(w, r)
	})
}

// Registry is where extra collectors (WatchConsumers) are registered.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Outcome is the value of the outcome label for a call in e's status: the
// status, or for a failed call its failure class.
func Outcome(e call.Envelope) string {
	if e.Status == call.Failed && e.Failure != "" {
		return string(e.Failure)
	}
	return string(e.Status)
}

// Transition counts one transition that stage emitted for e. It is called
// once per envelope a gate returned (pipeline.Emitter.Outputs), so a call counts once
// per entry into a status: a replay that passes validation after a schema
// fix does not count schema_invalid again. An input redelivered after its
// outputs were built but not stored may count twice; counters are rates, the
// calls bucket is the record.
func (m *Metrics) Transition(stage string, e call.Envelope) {
	tool, prov, out := e.ToolName, e.Provider, Outcome(e)
	if e.Status.Terminal() {
		m.calls.WithLabelValues(tool, prov, out).Inc()
	}
	if e.Status.Terminal() && !e.Status.OK() { // pipeline.Emitter.Outputs dead-letters it
		m.deadLetters.WithLabelValues(streams.FailedAt(e)).Inc()
	}
	switch e.Status {
	case call.InvalidJSON:
		m.invalidJSON.WithLabelValues(tool, prov, out).Inc()
	case call.SchemaInvalid:
		m.schemaInvalid.WithLabelValues(tool, prov, out).Inc()
	case call.Truncated:
		m.truncated.WithLabelValues(tool, prov, out).Inc()
	case call.ExecutionFailed:
		m.execFailed.WithLabelValues(tool, prov, out).Inc()
	case call.SealInvalid:
		m.sealInvalid(e)
	}
	m.observeDwell(stage, e, time.Now())
	if stage == streams.Repair && attemptedNow(e) {
		m.repairAttempts.WithLabelValues(tool, prov, out).Inc()
	}
}

// attemptedNow reports whether the repair gate asked the model in this
// visit: only an attempt moves a call through repairing, so one of the
// trailing repair steps of the history is repairing.
func attemptedNow(e call.Envelope) bool {
	for i := len(e.History) - 1; i >= 0 && e.History[i].Stage == streams.Repair; i-- {
		if e.History[i].Status == call.Repairing {
			return true
		}
	}
	return false
}

// Observe records one handler run of stage; it fits worker.Config.Observe.
func (m *Metrics) Observe(stage string, d time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.stageSeconds.WithLabelValues(stage, result).Observe(d.Seconds())
}
