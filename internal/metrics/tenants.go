package metrics

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// TenantLane is one fairness lane that carries listed tenants (issue 37,
// "Seen"), read from the lanes' durables, which every replica shares: no
// store of its own. Only the lanes of the tenant list are read (accumulate
// has a durable for each lane index that carries a listed tenant, and its
// filters name them), so what is shown per tenant is bounded by the list.
// A tenant not listed whose hash falls in a listed tenant's lane is counted
// in that lane, and tenants sharing a lane (more tenants than lanes) share
// its figures.
type TenantLane struct {
	Lane    int      `json:"lane"`
	Tenants []string `json:"tenants"` // subject tokens (wire.TenantToken), in list order
	// Backlog is the calls and inputs of the lane not yet acknowledged at
	// every stage, accumulate to execute: waiting or being handled.
	Backlog uint64 `json:"backlog"`
	// Batch is the part of Backlog in the batch lanes (Toolgate-Priority).
	Batch uint64 `json:"batch"`
	// Oldest is when the oldest input of the lane not yet acknowledged was
	// stored, at any stage (zero: none): its dwell so far.
	Oldest time.Time `json:"oldest,omitzero"`
	// Delivered is how many calls the executor groups' lane durables of
	// the lane have delivered to execute's handlers since they were applied
	// (a retry counts again): its share of execute.
	Delivered uint64 `json:"delivered_to_execute"`
}

// TenantLanes reads the lanes of the tenant list; none without one.
type TenantLanes func(ctx context.Context) ([]TenantLane, error)

// laneDurable is one durable of a lane as listed.
type laneDurable struct {
	idx     int
	batch   bool
	exec    bool
	filters []string
	ci      *jetstream.ConsumerInfo
}

// JetStreamTenantLanes reads the lanes from the durables in js: accumulate's
// lane durables name the lanes and their tenants; the laned gate stages'
// and the executor groups' lane durables with the same index add to them.
// The oldest unacknowledged input is looked up only in durables that have
// some, in the streams msgs allows (nil: all; the console may not read
// producers' input, TOOLGATE_IN, so its accumulate backlog has no age).
func JetStreamTenantLanes(js jetstream.JetStream, msgs func(stream string) bool) TenantLanes {
	return func(ctx context.Context) ([]TenantLane, error) {
		lanes := map[int]*TenantLane{}
		var durables []laneDurable
		// Accumulate's lane durables in TOOLGATE_IN (interactive and batch)
		// and in TOOLGATE_RESPONSES (their claimed whole responses, issue
		// 30; absent on a deployment of before).
		claimed, err := streams.AllResponsesStreams(ctx, js) // and its partitions (streams/claimed_partitions.go)
		if err != nil {
			claimed = []string{streams.StreamResponses}
		}
		ins, err := streams.AllInStreams(ctx, js) // and TOOLGATE_IN's (streams/in_partitions.go)
		if err != nil {
			ins = []string{streams.StreamIn}
		}
		for _, name := range append(ins, claimed...) {
			in, err := js.Stream(ctx, name)
			if name != streams.StreamOf(streams.Accumulate) && errors.Is(err, jetstream.ErrStreamNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			l := in.ListConsumers(ctx)
			for ci := range l.Info() {
				idx, batch, ok := accumulateLaneIndex(ci.Name)
				if !ok {
					continue
				}
				tl := lanes[idx]
				if tl == nil {
					tl = &TenantLane{Lane: idx}
					lanes[idx] = tl
				}
				filters := filtersOf(ci)
				if len(tl.Tenants) == 0 { // each of a lane's durables names its tenants, in list order
					for _, f := range filters {
						if tok, _, ok := wire.SplitInTenant(f); ok && !slices.Contains(tl.Tenants, tok) {
							tl.Tenants = append(tl.Tenants, tok)
						}
					}
				}
				durables = append(durables, laneDurable{idx: idx, batch: batch, filters: filters, ci: ci})
			}
			if err := l.Err(); err != nil {
				return nil, err
			}
		}
		if len(lanes) == 0 {
			return nil, nil
		}
		more, err := gateLaneDurables(ctx, js, lanes)
		if err != nil {
			return nil, err
		}
		durables = append(durables, more...)
		oldest := map[int]time.Time{}
		for _, d := range durables {
			tl := lanes[d.idx]
			n := d.ci.NumPending + uint64(d.ci.NumAckPending)
			tl.Backlog += n
			if d.batch {
				tl.Batch += n
			}
			if d.exec {
				tl.Delivered += d.ci.Delivered.Consumer
			}
			if n == 0 || (msgs != nil && !msgs(d.ci.Stream)) {
				continue
			}
			if at := firstUnacked(ctx, js, d); !at.IsZero() && (oldest[d.idx].IsZero() || at.Before(oldest[d.idx])) {
				oldest[d.idx] = at
			}
		}
		out := make([]TenantLane, 0, len(lanes))
		for idx, tl := range lanes {
			tl.Oldest = oldest[idx]
			out = append(out, *tl)
		}
		slices.SortFunc(out, func(a, b TenantLane) int { return a.Lane - b.Lane })
		return out, nil
	}
}

// accumulateLaneIndex is the lane index of an accumulate lane durable's
// name (streams.AccumulateLane, streams.AccumulateClaimedLane, or
// streams.AccumulateBatchLane: batch).
func accumulateLaneIndex(name string) (idx int, batch, ok bool) {
	s, ok := strings.CutPrefix(name, streams.Accumulate+"_")
	if !ok {
		return 0, false, false
	}
	s, batch = strings.CutSuffix(s, "b")
	if !batch {
		s, _ = strings.CutSuffix(s, "r")
	}
	n, err := strconv.Atoi(s)
	return n, batch, err == nil && n >= 0 && strconv.Itoa(n) == s
}

// laneToken splits a lane token ("3i", "3b").
func laneToken(tok string) (idx int, batch, ok bool) {
	if len(tok) < 2 {
		return 0, false, false
	}
	kind := tok[len(tok)-1]
	n, err := strconv.Atoi(tok[:len(tok)-1])
	if err != nil || n < 0 || (kind != 'i' && kind != 'b') {
		return 0, false, false
	}
	return n, kind == 'b', true
}

// gateLaneDurables lists the lane durables of the laned gate stages
// (<stage>_<lane>, each in its stage's lanes' stream and its partition
// streams) and of the executor groups (in execute's stream and its
// partition streams) whose index is in lanes.
func gateLaneDurables(ctx context.Context, js jetstream.JetStream, lanes map[int]*TenantLane) ([]laneDurable, error) {
	var out []laneDurable
	owner := map[string]string{} // stream -> the partitioned stage it holds
	for _, stage := range streams.PartitionedStages() {
		owner[streams.PartitionStream(stage, 0)] = stage
		more, err := streams.PartitionStreamNames(ctx, js, stage)
		if err != nil {
			return nil, err
		}
		for _, name := range more {
			owner[name] = stage
		}
	}
	names := make([]string, 0, len(owner))
	for name := range owner {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		st, err := js.Stream(ctx, name)
		if err != nil {
			continue // not applied: nothing waits there
		}
		stage := owner[name]
		l := st.ListConsumers(ctx)
		for ci := range l.Info() {
			var tok string
			exec := false
			if _, lane, ok := streams.SplitExecuteLaneDurable(ci.Name); ok && stage == streams.Execute {
				tok, exec = lane, true
			} else if i := strings.LastIndexByte(ci.Name, '_'); i > 0 && ci.Name[:i] == stage && stage != streams.Execute {
				tok = ci.Name[i+1:]
			} else {
				continue
			}
			idx, batch, ok := laneToken(tok)
			if !ok || lanes[idx] == nil {
				continue
			}
			out = append(out, laneDurable{idx: idx, batch: batch, exec: exec, filters: filtersOf(ci), ci: ci})
		}
		if err := l.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// filtersOf is a durable's filter subjects, one or many.
func filtersOf(ci *jetstream.ConsumerInfo) []string {
	if ci.Config.FilterSubject != "" {
		return []string{ci.Config.FilterSubject}
	}
	return ci.Config.FilterSubjects
}

// firstUnacked is when the first message on d's filters past its ack floor
// was stored (zero: none, or not readable).
func firstUnacked(ctx context.Context, js jetstream.JetStream, d laneDurable) time.Time {
	st, err := js.Stream(ctx, d.ci.Stream)
	if err != nil {
		return time.Time{}
	}
	var first time.Time
	for _, f := range d.filters {
		msg, err := st.GetMsg(ctx, d.ci.AckFloor.Stream+1, jetstream.WithGetMsgSubject(f))
		if err == nil && (first.IsZero() || msg.Time.Before(first)) {
			first = msg.Time
		}
	}
	return first
}

var (
	tenantBacklogDesc = prometheus.NewDesc("toolgate_tenant_backlog",
		"Calls and inputs of the tenant's fairness lane not yet acknowledged at any stage, accumulate to execute; only tenants of the tenant list (--tenants), tenants sharing a lane share its figure.", []string{"tenant", "priority"}, nil)
	tenantOldestDesc = prometheus.NewDesc("toolgate_tenant_oldest_pending_seconds",
		"Age of the oldest input of the tenant's fairness lane not yet acknowledged at any stage, 0 when none: how long its waiting calls have waited so far. Only tenants of the tenant list.", []string{"tenant"}, nil)
)

// maxTenantSeries bounds the tenants reported per scrape.
const maxTenantSeries = 256

type tenantLanes struct{ read TenantLanes }

func (t *tenantLanes) Describe(ch chan<- *prometheus.Desc) {
	ch <- tenantBacklogDesc
	ch <- tenantOldestDesc
}

// Collect reports the lanes when the streams answered within 2 seconds.
func (t *tenantLanes) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ls, err := t.read(ctx)
	if err != nil {
		return
	}
	n := 0
	now := time.Now()
	for _, l := range ls {
		age := 0.0
		if !l.Oldest.IsZero() {
			age = max(now.Sub(l.Oldest).Seconds(), 0)
		}
		for _, tenant := range l.Tenants {
			if n >= maxTenantSeries {
				return
			}
			n++
			ch <- prometheus.MustNewConstMetric(tenantBacklogDesc, prometheus.GaugeValue, float64(l.Backlog-l.Batch), tenant, streams.PriorityInteractive)
			ch <- prometheus.MustNewConstMetric(tenantBacklogDesc, prometheus.GaugeValue, float64(l.Batch), tenant, streams.PriorityBatch)
			ch <- prometheus.MustNewConstMetric(tenantOldestDesc, prometheus.GaugeValue, age, tenant)
		}
	}
}

// WatchTenantLanes reports each listed tenant's backlog and oldest waiting
// input on every scrape (its dwell and share of execute are
// toolgate_call_dwell_seconds). The returned function stops reporting; a
// second watch is ignored.
func (m *Metrics) WatchTenantLanes(read TenantLanes) (stop func()) {
	return m.watch(&tenantLanes{read: read})
}
