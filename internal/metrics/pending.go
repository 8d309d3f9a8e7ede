package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/streams"
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
	oldestDesc = prometheus.NewDesc("toolgate_consumer_oldest_pending_seconds",
		"Age of the oldest message the stage's consumer has not acknowledged (delivered or not), 0 when none: a stage that is stuck or too slow.", []string{"stage"}, nil)
)

// FirstPending returns when the oldest message a stage's consumer has not
// acknowledged was stored (zero: none), given the consumer's state.
type FirstPending func(ctx context.Context, stage string, ci *jetstream.ConsumerInfo) (time.Time, error)

// pending asks each stage's consumer for its state at scrape time, so the
// numbers are never older than the scrape and nothing polls between scrapes.
type pending struct {
	stages []string
	info   ConsumerInfo
	first  FirstPending // nil: no oldest-age gauge
	now    func() time.Time
}

func (p *pending) Describe(ch chan<- *prometheus.Desc) {
	ch <- pendingDesc
	ch <- ackPendingDesc
	ch <- redeliveredDesc
	ch <- oldestDesc
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
		if p.first == nil {
			continue
		}
		if at, err := p.first(ctx, st, ci); err == nil {
			age := 0.0
			if !at.IsZero() {
				age = max(p.now().Sub(at).Seconds(), 0)
			}
			ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age, st)
		}
	}
}

// WatchConsumers reports the pending work of stages' consumers on every
// scrape. The returned function stops reporting. A second watch on the
// same Metrics while the first is active is ignored.
func (m *Metrics) WatchConsumers(stages []string, info ConsumerInfo) (stop func()) {
	return m.WatchConsumersOldest(stages, info, nil)
}

// WatchConsumersOldest is WatchConsumers with the age of each consumer's
// oldest unacknowledged message (toolgate_consumer_oldest_pending_seconds).
func (m *Metrics) WatchConsumersOldest(stages []string, info ConsumerInfo, first FirstPending) (stop func()) {
	return m.watch(&pending{stages: append([]string(nil), stages...), info: info, first: first, now: time.Now}) // a second watch: the first reports
}

// JetStreamInfo is the ConsumerInfo of the stages' durables in js; stream
// names the stream a stage consumes (streams.StreamOf). A laned stage's
// pending, unacknowledged and redelivered counts are the sums over its
// main durable and its lane durables (streams.Durables, default lanes).
func JetStreamInfo(js jetstream.JetStream, stream func(stage string) string) ConsumerInfo {
	return func(ctx context.Context, stage string) (*jetstream.ConsumerInfo, error) {
		c, err := js.Consumer(ctx, stream(stage), stage)
		if err != nil {
			return nil, err
		}
		ci, err := c.Info(ctx)
		if err != nil {
			return nil, err
		}
		for _, d := range streams.Durables(stage, streams.DefaultLanes)[1:] { // lanes are automatic: those missing are skipped
			lc, err := js.Consumer(ctx, laneStream(stage, d, stream), d)
			if err != nil {
				continue // not applied: nothing waits there
			}
			li := lc.CachedInfo()
			ci.NumPending += li.NumPending
			ci.NumAckPending += li.NumAckPending
			ci.NumRedelivered += li.NumRedelivered
		}
		if stage == streams.Execute { // calls waiting for their executor group, and scheduled retries
			if si, err := executeStream(ctx, js); err == nil {
				ci.NumPending += si.State.Msgs
			}
		}
		addPartitions(ctx, js, stage, ci)
		return ci, nil
	}
}

// addPartitions adds to ci what waits in stage's partition streams beyond
// partition 0 (streams.PartitionStreamNames), whichever exist: a laned
// stage's durables there (its main durable and lanes, under their
// partition 0 names), execute's streams' messages (its groups' calls and
// scheduled retries). What may not be read is left out.
func addPartitions(ctx context.Context, js jetstream.JetStream, stage string, ci *jetstream.ConsumerInfo) {
	if stage == streams.Accumulate { // its claimed durables in TOOLGATE_RESPONSES' partitions
		addIngestPartitions(ctx, js, ci)
		return
	}
	names, err := streams.PartitionStreamNames(ctx, js, stage)
	if err != nil {
		return
	}
	for _, name := range names {
		if stage == streams.Execute {
			if st, err := js.Stream(ctx, name); err == nil {
				ci.NumPending += st.CachedInfo().State.Msgs
			}
			continue
		}
		for _, d := range streams.Durables(stage, streams.DefaultLanes) {
			addConsumer(ctx, js, ci, name, d)
		}
	}
}

// addConsumer adds durable's figures in stream to ci; a durable not
// applied (or not readable) adds nothing: nothing waits there.
func addConsumer(ctx context.Context, js jetstream.JetStream, ci *jetstream.ConsumerInfo, stream, durable string) {
	c, err := js.Consumer(ctx, stream, durable)
	if err != nil {
		return
	}
	i := c.CachedInfo()
	ci.NumPending += i.NumPending
	ci.NumAckPending += i.NumAckPending
	ci.NumRedelivered += i.NumRedelivered
}

// laneStream is the stream of durable, one of stage's lane durables: a
// laned gate stage's own lanes' stream (streams.LaneStream), accumulate's
// claimed durables' TOOLGATE_RESPONSES, else the stage's (stream).
func laneStream(stage, durable string, stream func(stage string) string) string {
	if streams.Laned(stage) || stage == streams.Accumulate {
		return streams.DurableStream(stage, durable)
	}
	return stream(stage)
}

// JetStreamFirstPending is the FirstPending of the stages' durables in js:
// the first message on the consumer's filter past its ack floor (in a
// work-queue stream, acknowledged messages are gone, so it is the oldest
// one left).
func JetStreamFirstPending(js jetstream.JetStream, stream func(stage string) string) FirstPending {
	return func(ctx context.Context, stage string, ci *jetstream.ConsumerInfo) (time.Time, error) {
		if ci.NumPending == 0 && ci.NumAckPending == 0 {
			return time.Time{}, nil
		}
		if stage == streams.Execute {
			return executeOldest(ctx, js, ci)
		}
		filters := []string{ci.Config.FilterSubject}
		if ci.Config.FilterSubject == "" {
			filters = ci.Config.FilterSubjects // a laned stage's main durable: its subject and the old lanes'
		}
		st, err := js.Stream(ctx, stream(stage))
		if err != nil {
			return time.Time{}, err
		}
		var oldest time.Time
		older := func(t time.Time) {
			if !t.IsZero() && (oldest.IsZero() || t.Before(oldest)) {
				oldest = t
			}
		}
		if len(filters) == 0 {
			filters = []string{""}
		}
		for _, f := range filters {
			var opts []jetstream.GetMsgOpt
			if f != "" {
				opts = append(opts, jetstream.WithGetMsgSubject(f))
			}
			msg, err := st.GetMsg(ctx, ci.AckFloor.Stream+1, opts...)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue // acknowledged since the consumer info
			}
			if err != nil {
				return time.Time{}, err
			}
			older(msg.Time)
		}
		if streams.Laned(stage) { // its lanes' stream holds its hops only: its first is the oldest
			older(firstStored(ctx, js, streams.LaneStream(stage)))
		}
		older(firstInPartitions(ctx, js, stage))
		return oldest, nil
	}
}

// firstStored is when the first message of stream was stored (zero: none,
// or not readable).
func firstStored(ctx context.Context, js jetstream.JetStream, stream string) time.Time {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return time.Time{}
	}
	si, err := st.Info(ctx)
	if err != nil || si.State.Msgs == 0 {
		return time.Time{}
	}
	msg, err := st.GetMsg(ctx, si.State.FirstSeq)
	if err != nil {
		return time.Time{}
	}
	return msg.Time
}

// firstInPartitions is when the oldest message of stage's partition
// streams beyond partition 0 was stored (zero: none): each holds that
// stage's hops only (execute's: its groups' calls and retries), a work
// queue, so its first message is its oldest waiting.
func firstInPartitions(ctx context.Context, js jetstream.JetStream, stage string) time.Time {
	names, err := streams.PartitionStreamNames(ctx, js, stage)
	if err != nil {
		return time.Time{}
	}
	var oldest time.Time
	for _, name := range names {
		if t := firstStored(ctx, js, name); !t.IsZero() && (oldest.IsZero() || t.Before(oldest)) {
			oldest = t
		}
	}
	return oldest
}

// executeStream is the info of the executor groups' stream (a work queue:
// what it holds is calls waiting for their group, and scheduled retries).
func executeStream(ctx context.Context, js jetstream.JetStream) (*jetstream.StreamInfo, error) {
	st, err := js.Stream(ctx, streams.StreamExecute)
	if err != nil {
		return nil, err
	}
	return st.Info(ctx)
}

// executeOldest is when the oldest call waiting at execute was stored: the
// first message of the groups' stream, or of the legacy durable's subject
// in the gates stream, whichever is older.
func executeOldest(ctx context.Context, js jetstream.JetStream, ci *jetstream.ConsumerInfo) (time.Time, error) {
	var oldest time.Time
	older := func(t time.Time) {
		if !t.IsZero() && (oldest.IsZero() || t.Before(oldest)) {
			oldest = t
		}
	}
	if si, err := executeStream(ctx, js); err == nil && si.State.Msgs > 0 {
		if st, err := js.Stream(ctx, streams.StreamExecute); err == nil {
			if msg, err := st.GetMsg(ctx, si.State.FirstSeq); err == nil {
				older(msg.Time)
			}
		}
	}
	if st, err := js.Stream(ctx, streams.StreamGates); err == nil {
		if msg, err := st.GetMsg(ctx, ci.AckFloor.Stream+1, jetstream.WithGetMsgSubject(streams.Gate(streams.Execute))); err == nil {
			older(msg.Time)
		}
	}
	older(firstInPartitions(ctx, js, streams.Execute))
	return oldest, nil
}

// addIngestPartitions adds to ci what waits for accumulate's durables in
// the partition streams beyond partition 0 of TOOLGATE_RESPONSES (its
// claimed durables) and of TOOLGATE_IN (its other durables),
// whichever exist (streams.IngestPartitionNames), under their partition 0
// names. What may not be read is left out.
func addIngestPartitions(ctx context.Context, js jetstream.JetStream, ci *jetstream.ConsumerInfo) {
	names, err := streams.IngestPartitionNames(ctx, js)
	if err != nil {
		return
	}
	for _, name := range names {
		for _, d := range streams.Durables(streams.Accumulate, streams.DefaultLanes) {
			if streams.IngestPartOf(streams.DurableStream(streams.Accumulate, d), name) {
				addConsumer(ctx, js, ci, name, d)
			}
		}
	}
}
