package metrics

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/streams"
)

// maxDeadLetterSeries bounds the series one scrape reports from the
// dead-letter stream's subjects: only the stages publish there, but a
// broken or hostile one must not grow the label set without bound.
const maxDeadLetterSeries = 500

// dlqPrefix opens every dead-letter subject: "toolgate.dlq.".
func dlqPrefix() string { return strings.TrimSuffix(streams.DLQ("", ""), ".") }

// newDeadLettersTotal is toolgate_dead_letters_total, registered on reg.
func newDeadLettersTotal(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolgate_dead_letters_total",
		Help: "Failed calls this process dead-lettered, by the stage the call failed at and the failure (toolgate.dlq.<stage>.<failure>). Alert on increase().",
	}, []string{"stage", "failure"})
	reg.MustRegister(c)
	return c
}

// DeadLetterCounts returns how many letters the dead-letter stream holds
// per subject (toolgate.dlq.<stage>.<failure>); an argument so tests can
// feed numbers.
type DeadLetterCounts func(ctx context.Context) (map[string]uint64, error)

var deadLettersDesc = prometheus.NewDesc("toolgate_dead_letters",
	"Dead letters stored in the dead-letter stream now, by stage and failure: every process reports the same stream, so aggregate with max, not sum.",
	[]string{"stage", "failure"}, nil)

type deadLetters struct{ counts DeadLetterCounts }

func (d *deadLetters) Describe(ch chan<- *prometheus.Desc) { ch <- deadLettersDesc }

// Collect reports the stream's subjects when it answered within 2 seconds
// (a process whose NATS user may not read the stream reports none).
func (d *deadLetters) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := d.counts(ctx)
	if err != nil {
		return
	}
	byLabel := map[[2]string]uint64{}
	for _, subj := range slices.Sorted(maps.Keys(counts)) { // the same series win every scrape
		n := counts[subj]
		rest, dlq := strings.CutPrefix(subj, dlqPrefix())
		st, failure, ok := strings.Cut(rest, ".")
		if !dlq || !ok || !streams.IsStage(st) || failure == "" || strings.Contains(failure, ".") {
			st, failure = "other", "other"
		}
		k := [2]string{st, failure}
		if _, seen := byLabel[k]; !seen && len(byLabel) >= maxDeadLetterSeries {
			k = [2]string{"other", "other"}
		}
		byLabel[k] += n
	}
	for k, n := range byLabel {
		ch <- prometheus.MustNewConstMetric(deadLettersDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
}

// WatchDeadLetters reports the dead-letter stream's letters on every scrape.
// The returned function stops reporting; a second watch is ignored.
func (m *Metrics) WatchDeadLetters(counts DeadLetterCounts) (stop func()) {
	return m.watch(&deadLetters{counts: counts})
}

// watch registers a scrape-time collector until the returned stop.
func (m *Metrics) watch(c prometheus.Collector) (stop func()) {
	if err := m.reg.Register(c); err != nil {
		return func() {}
	}
	return func() { m.reg.Unregister(c) }
}
