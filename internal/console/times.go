package console

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"

	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"
)

// handleHistogram is the stage handler histogram of internal/metrics.
const handleHistogram = "toolgate_stage_handle_seconds"

// recentResults is how many of the latest results the standalone console
// reads to time the stages.
const recentResults = 300

// histSample is the histogram's buckets per stage at one time: the next
// sample's difference to it is the recent window.
type histSample struct {
	buckets map[string][]bucket
}

type bucket struct {
	le    float64
	count uint64
}

// handleTimes returns p50 and p99 per stage, and where they come from: the
// handle-time histogram of this process's pipeline (Config.Metrics) since
// the previous sample, or, for a console without one, the time each stage
// held a call in the histories of the latest results.
func (s *Server) handleTimes(ctx context.Context, c *overviewCache) (map[string][2]time.Duration, string) {
	if s.cfg.Metrics != nil {
		return c.fromHistogram(s.cfg.Metrics.Gather)
	}
	t, err := s.fromResults(ctx)
	if err != nil {
		return nil, "latest results (unreadable: " + shortErr(err) + ")"
	}
	return t, "time each stage held a call, in the histories of the latest results"
}

func (c *overviewCache) fromHistogram(gather func() ([]*dto.MetricFamily, error)) (map[string][2]time.Duration, string) {
	const from = "handler time (toolgate_stage_handle_seconds) since the previous refresh, or since start"
	fams, err := gather()
	if err != nil {
		return nil, from
	}
	now := &histSample{buckets: map[string][]bucket{}}
	for _, f := range fams {
		if f.GetName() != handleHistogram {
			continue
		}
		for _, m := range f.GetMetric() {
			stage := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" {
					stage = l.GetValue()
				}
			}
			h := m.GetHistogram()
			if stage == "" || h == nil {
				continue
			}
			bs := now.buckets[stage]
			for i, b := range h.GetBucket() {
				if i >= len(bs) {
					bs = append(bs, bucket{le: b.GetUpperBound()})
				}
				bs[i].count += b.GetCumulativeCount()
			}
			// +Inf holds every observation.
			if n := len(h.GetBucket()); len(bs) == n {
				bs = append(bs, bucket{le: math.Inf(1)})
			}
			bs[len(bs)-1].count += h.GetSampleCount()
			now.buckets[stage] = bs
		}
	}
	out := map[string][2]time.Duration{}
	for stage, bs := range now.buckets {
		win := bs
		if c.hist != nil {
			if old, ok := c.hist.buckets[stage]; ok && len(old) == len(bs) && bs[len(bs)-1].count > old[len(old)-1].count {
				win = make([]bucket, len(bs))
				for i := range bs {
					win[i] = bucket{le: bs[i].le, count: bs[i].count - old[i].count}
				}
			}
		}
		if win[len(win)-1].count == 0 {
			continue
		}
		out[stage] = [2]time.Duration{quantile(win, .5), quantile(win, .99)}
	}
	c.hist = now
	return out, from
}

// quantile estimates q from cumulative buckets, linear within a bucket as
// Prometheus's histogram_quantile does.
func quantile(bs []bucket, q float64) time.Duration {
	total := float64(bs[len(bs)-1].count)
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range bs {
		if float64(b.count) >= rank {
			if math.IsInf(b.le, 1) {
				return time.Duration(lower * float64(time.Second))
			}
			in := float64(b.count) - below
			v := b.le
			if in > 0 {
				v = lower + (b.le-lower)*(rank-below)/in
			}
			return time.Duration(v * float64(time.Second))
		}
		lower, below = b.le, float64(b.count)
	}
	return time.Duration(lower * float64(time.Second))
}

// fromResults times each stage by the gaps in the histories of the latest
// results: a step's stage held the call since the step before. With
// partitions the latest are each results stream's share of them.
func (s *Server) fromResults(ctx context.Context) (map[string][2]time.Duration, error) {
	refs, err := streams.ResultsStreams(ctx, s.cfg.JS)
	if err != nil {
		return nil, err
	}
	per := map[string][]time.Duration{}
	share := (recentResults + len(refs) - 1) / len(refs)
	for _, ref := range refs {
		if err := s.recentGaps(ctx, ref.Name, share, per); err != nil {
			return nil, err
		}
	}
	if len(per) == 0 {
		return nil, nil
	}
	out := map[string][2]time.Duration{}
	for stage, ds := range per {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		out[stage] = [2]time.Duration{ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*99/100)]}
	}
	return out, nil
}

// recentGaps adds to per the gaps in the histories of stream's latest n
// results.
func (s *Server) recentGaps(ctx context.Context, stream string, n int, per map[string][]time.Duration) error {
	st, err := s.cfg.JS.Stream(ctx, stream)
	if err != nil {
		return err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return err
	}
	if info.State.Msgs == 0 {
		return nil
	}
	start := uint64(1)
	if info.State.LastSeq > uint64(n) {
		start = info.State.LastSeq - uint64(n) + 1
	}
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: start})
	if err != nil {
		return err
	}
	for read := 0; read < n; {
		batch, err := c.FetchNoWait(100)
		if err != nil {
			return err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			var r pipeline.Result
			if json.Unmarshal(m.Data(), &r) != nil {
				continue
			}
			for i := 1; i < len(r.History); i++ {
				if d := r.History[i].At.Sub(r.History[i-1].At); d >= 0 {
					per[r.History[i].Stage] = append(per[r.History[i].Stage], d)
				}
			}
		}
		if got == 0 {
			break
		}
		read += got
	}
	return nil
}
