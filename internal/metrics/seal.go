package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
)

// newSealInvalid is toolgate_seal_invalid_total, registered on reg.
func newSealInvalid(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolgate_seal_invalid_total",
		Help: "Calls the execute gate refused because their gate seals were missing, forged or made for other arguments (a forged, edited or replayed envelope; a gate skipped), by the stage whose seal failed; nothing ran. Alert on any increase.",
	}, []string{"stage"})
	reg.MustRegister(c)
	return c
}

// sealInvalid counts a call that ended seal_invalid, by the stage its
// seal_invalid step names (seal.NoteStage keeps the label set bounded).
func (m *Metrics) sealInvalid(e call.Envelope) {
	stage := "unknown"
	if n := len(e.History); n > 0 && e.History[n-1].Status == call.SealInvalid {
		stage = seal.NoteStage(e.History[n-1].Note)
	}
	m.sealInvalidTotal.WithLabelValues(stage).Inc()
}
