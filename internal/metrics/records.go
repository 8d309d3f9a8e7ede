package metrics

import "github.com/prometheus/client_golang/prometheus"

// newMalformedRecords is toolgate_malformed_records_total, registered on reg.
func newMalformedRecords(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolgate_malformed_records_total",
		Help: "Stored records that could not be read or broke their own invariants, by source (a key-value bucket, or dlq); each was logged and skipped or settled as a recorded failure.",
	}, []string{"source"})
	reg.MustRegister(c)
	return c
}

// MalformedRecord counts one malformed record read from source: a bucket
// name (streams.Bucket*) or "dlq". source must come from toolgate's own
// constants, never from the record, so the label set stays bounded.
func (m *Metrics) MalformedRecord(source string) {
	m.malformed.WithLabelValues(source).Inc()
}
