package console

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/streams"
)

// stageRow is one stage on the overview.
type stageRow struct {
	Name        string
	Known       bool   // its consumer answered
	Err         string // why not
	Waiting     int    // pull requests waiting: the replicas fetching now
	Pending     uint64
	AckPending  int
	Redelivered int
	Rate        float64 // calls acked per second since the last sample
	RateKnown   bool    // a sample at most rateWindow old to measure from
	P50, P99    time.Duration
	Timed       bool // P50/P99 are known
}

// failureRow is the dead letters stored for one stage and failure class.
type failureRow struct {
	Stage, Failure string
	Count          uint64
}

// overview is one snapshot of the pipeline.
type overview struct {
	At             time.Time
	Stages         []stageRow
	DeadLetters    []failureRow
	DeadTotal      uint64
	Approvals      int
	OldestApproval time.Time
	OutcomeUnknown uint64
	TimesFrom      string // where P50/P99 come from
	Groups         []metrics.ExecutorGroup
	OpenGroups     []metrics.ExecutorGroup // circuit open: the banner
	Tenants        []tenantRow             // the tenant list's lanes; none without one
	Errors         []string
}

// tenantRow is one fairness lane of listed tenants on the overview.
type tenantRow struct {
	metrics.TenantLane
	Waited time.Duration // since Oldest
	// Share is the lane's percent of the calls execute's lanes delivered:
	// since the last sample when one is at most rateWindow old (Recent),
	// else since the lanes were applied.
	Share  float64
	Recent bool
}

// overviewCache computes a snapshot at most once a second, however many
// pages and live streams ask.
type overviewCache struct {
	s    *Server
	mu   sync.Mutex
	last *overview
	prev map[string]ackSample
	exec map[int]ackSample // each tenant lane's calls delivered to execute, for its recent share
	hist *histSample
}

type ackSample struct {
	floor uint64
	at    time.Time
}

func (c *overviewCache) get(ctx context.Context) *overview {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.s.cfg.Now()
	if c.last != nil && now.Sub(c.last.At) < time.Second {
		return c.last
	}
	ov := c.compute(ctx, now)
	c.last = ov
	return ov
}

func (c *overviewCache) compute(ctx context.Context, now time.Time) *overview {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ov := &overview{At: now}
	if c.prev == nil {
		c.prev = map[string]ackSample{}
	}
	times, from := c.s.handleTimes(ctx, c)
	ov.TimesFrom = from
	for _, st := range streams.Table() {
		row := stageRow{Name: st.Name}
		var ci *jetstream.ConsumerInfo
		var err error
		if streams.Partitioned(st.Name) {
			// Its backlog as toolgate_consumer_pending counts it: its
			// lanes, execute's groups' calls, every partition stream.
			ci, err = metrics.JetStreamInfo(c.s.cfg.JS, streams.StreamOf)(ctx, st.Name)
		} else {
			var cons jetstream.Consumer
			if cons, err = c.s.cfg.JS.Consumer(ctx, st.Stream, st.Consumer.Name); err == nil {
				ci, err = cons.Info(ctx)
			}
		}
		if err == nil && st.Name == streams.Accumulate { // and its durable of a tenant's whole responses (TOOLGATE_RESPONSES, issue 30) in every partition, and its main durable in TOOLGATE_IN's partitions
			claimed, lerr := streams.AllResponsesStreams(ctx, c.s.cfg.JS)
			if lerr != nil {
				claimed = []string{streams.StreamResponses}
			}
			ins, lerr := streams.InStreamNames(ctx, c.s.cfg.JS)
			if lerr != nil {
				ins = nil
			}
			durable := func(name string) string {
				if streams.IsInPartitionStream(name) {
					return streams.Accumulate
				}
				return streams.AccumulateClaimed
			}
			for _, name := range append(claimed, ins...) {
				rc, rerr := c.s.cfg.JS.Consumer(ctx, name, durable(name))
				if rerr != nil {
					continue
				}
				ri := rc.CachedInfo()
				ci.NumPending += ri.NumPending
				ci.NumAckPending += ri.NumAckPending
				ci.NumRedelivered += ri.NumRedelivered
				ci.NumWaiting += ri.NumWaiting
				ci.AckFloor.Consumer += ri.AckFloor.Consumer // the rate counts both
			}
		}
		if err != nil {
			row.Err = shortErr(err)
		} else {
			row.Known = true
			row.Waiting, row.Pending, row.AckPending, row.Redelivered = ci.NumWaiting, ci.NumPending, ci.NumAckPending, ci.NumRedelivered
			if p, ok := c.prev[st.Name]; ok && now.After(p.at) && now.Sub(p.at) <= rateWindow && ci.AckFloor.Consumer >= p.floor {
				row.Rate, row.RateKnown = float64(ci.AckFloor.Consumer-p.floor)/now.Sub(p.at).Seconds(), true
			}
			c.prev[st.Name] = ackSample{floor: ci.AckFloor.Consumer, at: now}
		}
		if t, ok := times[st.Name]; ok {
			row.P50, row.P99, row.Timed = t[0], t[1], true
		}
		ov.Stages = append(ov.Stages, row)
	}
	if gs, err := metrics.JetStreamExecutorGroups(c.s.cfg.JS)(ctx); err != nil {
		ov.Errors = append(ov.Errors, "executor groups: "+shortErr(err))
	} else {
		ov.Groups = gs
		for _, g := range gs {
			if g.Circuit == metrics.CircuitOpen {
				ov.OpenGroups = append(ov.OpenGroups, g)
			}
		}
	}
	if ls, err := metrics.JetStreamTenantLanes(c.s.cfg.JS, gateHops)(ctx); err != nil {
		ov.Errors = append(ov.Errors, "fairness lanes: "+shortErr(err))
	} else {
		ov.Tenants = c.tenantRows(ls, now)
	}
	if err := c.s.deadLetterCounts(ctx, ov); err != nil {
		ov.Errors = append(ov.Errors, "dead letters: "+shortErr(err))
	}
	if err := c.s.pendingApprovals(ctx, ov); err != nil {
		ov.Errors = append(ov.Errors, "approvals: "+shortErr(err))
	}
	return ov
}

// gateHops are the streams whose messages the console reads for a lane's
// oldest waiting input: the gates' hops (their partitions' included),
// never the producers' input.
func gateHops(stream string) bool {
	return stream == streams.StreamGates || stream == streams.StreamExecute || slices.Contains(streams.LaneStreams(), stream) || streams.IsPartitionStream(stream)
}

// tenantRows adds each lane's share of execute: of the calls delivered to execute
// since the previous sample when it is recent and every lane has one, else
// since the lanes were applied.
func (c *overviewCache) tenantRows(ls []metrics.TenantLane, now time.Time) []tenantRow {
	if c.exec == nil {
		c.exec = map[int]ackSample{}
	}
	recent := true
	var total, totalRecent uint64
	for _, l := range ls {
		total += l.Delivered
		p, ok := c.exec[l.Lane]
		if !ok || now.Sub(p.at) > rateWindow || !now.After(p.at) || l.Delivered < p.floor {
			recent = false
			continue
		}
		totalRecent += l.Delivered - p.floor
	}
	recent = recent && totalRecent > 0
	out := make([]tenantRow, 0, len(ls))
	for _, l := range ls {
		r := tenantRow{TenantLane: l, Recent: recent}
		if !l.Oldest.IsZero() {
			r.Waited = max(now.Sub(l.Oldest), 0)
		}
		switch {
		case recent:
			r.Share = 100 * float64(l.Delivered-c.exec[l.Lane].floor) / float64(totalRecent)
		case total > 0:
			r.Share = 100 * float64(l.Delivered) / float64(total)
		}
		out = append(out, r)
	}
	for _, l := range ls {
		c.exec[l.Lane] = ackSample{floor: l.Delivered, at: now}
	}
	return out
}

// deadLetterCounts reads the dead-letter stream's subjects
// (toolgate.dlq.<stage>.<failure>), as toolgate_dead_letters exports them.
func (s *Server) deadLetterCounts(ctx context.Context, ov *overview) error {
	st, err := s.cfg.JS.Stream(ctx, streams.StreamDLQ)
	if err != nil {
		return err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(streams.DLQ("*", "*")))
	if err != nil {
		return err
	}
	for subj, n := range info.State.Subjects {
		tok := strings.SplitN(subj, ".", 4)
		if len(tok) != 4 {
			continue
		}
		ov.DeadLetters = append(ov.DeadLetters, failureRow{Stage: tok[2], Failure: tok[3], Count: n})
		ov.DeadTotal += n
		if tok[3] == string(call.OutcomeUnknown) {
			ov.OutcomeUnknown += n
		}
	}
	sort.Slice(ov.DeadLetters, func(i, j int) bool {
		a, b := ov.DeadLetters[i], ov.DeadLetters[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Stage+a.Failure < b.Stage+b.Failure
	})
	return nil
}

func (s *Server) pendingApprovals(ctx context.Context, ov *overview) error {
	recs, err := s.approvalRecords(ctx)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.State == approval.Pending {
			ov.Approvals++
			if ov.OldestApproval.IsZero() || r.RequestedAt.Before(ov.OldestApproval) {
				ov.OldestApproval = r.RequestedAt
			}
		}
	}
	return nil
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// live is the overview's values keyed as the page's data-live attributes.
func (ov *overview) live() []liveItem {
	var out []liveItem
	for _, r := range ov.Stages {
		k := "stage." + r.Name + "."
		if !r.Known {
			out = append(out, liveItem{K: k + "pending", T: "?"})
			continue
		}
		out = append(out,
			liveItem{K: k + "replicas", T: fmt.Sprint(r.Waiting)},
			liveItem{K: k + "pending", T: fmt.Sprint(r.Pending)},
			liveItem{K: k + "ackpending", T: fmt.Sprint(r.AckPending)},
			liveItem{K: k + "rate", T: rate(r)},
			liveItem{K: k + "p50", T: timed(r.Timed, r.P50)},
			liveItem{K: k + "p99", T: timed(r.Timed, r.P99)},
		)
	}
	alert := ov.OutcomeUnknown > 0
	out = append(out,
		liveItem{K: "outcome-unknown", T: fmt.Sprint(ov.OutcomeUnknown), A: &alert},
		liveItem{K: "approvals", T: fmt.Sprint(ov.Approvals)},
		liveItem{K: "dead-total", T: fmt.Sprint(ov.DeadTotal)},
		liveItem{K: "at", T: ov.At.Local().Format("15:04:05")},
	)
	return out
}

// rateWindow is the oldest sample a rate is measured from: a rate over
// the hours nobody looked would read as now.
const rateWindow = time.Minute

func rate(r stageRow) string {
	if !r.RateKnown {
		return "-"
	}
	return fmt.Sprintf("%.1f", r.Rate)
}

func timed(ok bool, d time.Duration) string {
	if !ok {
		return "-"
	}
	return fmtDur(d)
}

// liveItem is one value a live update sets: the text of every element
// with data-live=K, and its alert class when A is set.
type liveItem struct {
	K string `json:"k"`
	T string `json:"t"`
	A *bool  `json:"a,omitempty"`
}

func (s *Server) overviewPage(w http.ResponseWriter, r *http.Request) {
	ov := s.ov.get(r.Context())
	s.render(w, r, "overview", "Overview", ov)
}
