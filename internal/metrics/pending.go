package metrics

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// ConsumerInfo returns the state of one stage's durable consumer; it fits
// jetstream.Consumer.Info and is an argument so tests can feed numbers.
type ConsumerInfo func(ctx context.Context, stage string) (*jetstream.ConsumerInfo, error)

var (
	pendingDesc = prometheus.NewDesc("toolgate_consumer_pending",
		"Messages in the stream not yet delivered to the stage's durable consumer.", []string{"stage"}, nil)
	ackPendingDesc = prometheus.NewDesc("toolgate_consumer_ack_pending",
		"Messages delivered to the stage's consumer and not yet acknowledged.", []string{"stage"}, nil)
	redeliveredDesc = prometheus.NewDesc("toolgate_consumer_redelivered",
		"Messages the stage's consumer is redelivering.", []string{"stage"}, nil)
)

// pending asks each stage's consumer for its state at scrape time, so the
// numbers are never older than the scrape and nothing polls between scrapes.
type pending struct {
	stages []string
	info   ConsumerInfo
}

func (p *pending) Describe(ch chan<- *prometheus.Desc) {
	ch <- pendingDesc
	ch <- ackPendingDesc
	ch <- redeliveredDesc
}

// Collect reports the stages whose consumer answered within 2 seconds; a
// stage that did not is left out of this scrape rather than reported as 0.
func (p *pending) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, st := range p.stages {
		ci, err := p.info(ctx, st)
		if err != nil || ci == nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(ci.NumPending), st)
		ch <- prometheus.MustNewConstMetric(ackPendingDesc, prometheus.GaugeValue, float64(ci.NumAckPending), st)
		ch <- prometheus.MustNewConstMetric(redeliveredDesc, prometheus.GaugeValue, float64(ci.NumRedelivered), st)
	}
}

// WatchConsumers reports the pending work of stages' consumers on every
// scrape. The returned function stops reporting. A second watch on the
// same Metrics while the first is active is ignored.
func (m *Metrics) WatchConsumers(stages []string, info ConsumerInfo) (stop func()) {
	c := &pending{stages: append([]string(nil), stages...), info: info}
	if err := m.reg.Register(c); err != nil {
		return func() {} // already watched: the first watch reports
	}
	return func() { m.reg.Unregister(c) }
}

// JetStreamInfo is the ConsumerInfo of the stages' durables in js; stream
// names the stream a stage consumes (streams.StreamOf).
func JetStreamInfo(js jetstream.JetStream, stream func(stage string) string) ConsumerInfo {
	return func(ctx context.Context, stage string) (*jetstream.ConsumerInfo, error) {
		c, err := js.Consumer(ctx, stream(stage), stage)
		if err != nil {
			return nil, err
		}
		return c.Info(ctx)
	}
}
