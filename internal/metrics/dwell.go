package metrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// dwell is toolgate_call_dwell_seconds: how long a call took from its
// arrival (the envelope's CreatedAt, set by accumulate) to the execute
// gate's verdict on it, by tenant where the deployment lists its tenants
// (bounded: a tenant not listed, and every tenant when none are, is the
// empty label, which Prometheus reads as no label).
type dwell struct {
	hist    *prometheus.HistogramVec
	mu      sync.RWMutex
	tenants []string
}

func newDwell(reg *prometheus.Registry) *dwell {
	d := &dwell{hist: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "toolgate_call_dwell_seconds",
		Help:    "Time from a call's arrival to the execute gate's verdict, by tenant where the tenant list is configured (--tenants): a tenant whose calls wait behind others' shows here.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"tenant"})}
	reg.MustRegister(d.hist)
	return d
}

// DwellTenants sets the tenants that get a label of their own.
func (m *Metrics) DwellTenants(tenants []string) {
	m.dwell.mu.Lock()
	defer m.dwell.mu.Unlock()
	m.dwell.tenants = slices.Clone(tenants)
}

// observeDwell records e's dwell when stage is execute.
func (m *Metrics) observeDwell(stage string, e call.Envelope, now time.Time) {
	if stage != streams.Execute || e.CreatedAt.IsZero() {
		return
	}
	m.dwell.mu.RLock()
	tenant := ""
	if slices.Contains(m.dwell.tenants, e.Request.Tenant) {
		tenant = e.Request.Tenant
	}
	m.dwell.mu.RUnlock()
	m.dwell.hist.WithLabelValues(tenant).Observe(max(now.Sub(e.CreatedAt).Seconds(), 0))
}
