package metrics

import "github.com/prometheus/client_golang/prometheus"

// limits are the execute gate's limit metrics, by limit name only: a
// limit's keys are made of tenants and arguments and are never a label.
type limits struct {
	events *prometheus.CounterVec
	fill   *prometheus.GaugeVec
}

func newLimits(reg *prometheus.Registry) limits {
	l := limits{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_limit_events_total",
			Help: "Calls a limit (rate limit, quota, budget) charged (the call ran), rejected (it ended limit_exceeded) or held to wait for its window, by limit name.",
		}, []string{"limit", "event"}),
		fill: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolgate_limit_fill_ratio",
			Help: "Usage over maximum of the key a limit last charged, by limit name (1: the next call of that key waits or is rejected).",
		}, []string{"limit"}),
	}
	reg.MustRegister(l.events, l.fill)
	return l
}

// LimitEvent counts one event of limit name; for a charge, fill is the
// charged key's usage over the limit's maximum. It fits gates.Execute's
// LimitEvent.
func (m *Metrics) LimitEvent(name, event string, fill float64) {
	m.limits.events.WithLabelValues(name, event).Inc()
	if event == "charged" {
		m.limits.fill.WithLabelValues(name).Set(fill)
	}
}
