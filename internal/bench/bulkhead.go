package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// The bulkhead scenarios' tools (issue 38): each is its own executor group
// (the default), beside OtherTool, whose group is its own too.
const (
	SlowTool  = "bench_erp_slow"
	DeadTool  = "bench_erp_dead"
	FastTool  = "bench_erp_fast" // the control: DeadTool's burst to an executor that answers at once
	OtherTool = "get_weather"    // examples/tools.yaml
)

// BulkheadToolsYAML defines SlowTool, DeadTool and FastTool, applied only for the
// bulkhead scenarios (their idle durables stay out of the other runs).
func BulkheadToolsYAML() []byte {
	var b strings.Builder
	b.WriteString("tools:\n")
	for _, name := range []string{SlowTool, DeadTool, FastTool} {
		fmt.Fprintf(&b, `  - name: %s
    description: Posts a document to the ERP. Bench only.
    input_schema:
      type: object
      properties:
        n: {type: integer}
      required: [n]
      additionalProperties: false
    policy:
      risk: read
`, name)
	}
	return []byte(b.String())
}

// Bulkhead is a scenario of issue 38: OtherTool is called at OtherRate,
// alone for Alone, then while a burst of Burst calls to Tool is published
// as fast as the client allows. With Down > 0 Tool's executor is down (no
// responders) from the start and revived Down after the burst began.
type Bulkhead struct {
	Name, About string
	Tool        string
	Burst       int
	OtherRate   float64
	Alone       time.Duration
	Down        time.Duration
	// Tenants, when set, sends the burst as tenant BurstTenant and the
	// other calls as OtherTenant, on a pipeline with those two tenants'
	// fairness lanes (issue 37): the gates before execute are shared and
	// first in, first out within a lane, so without lanes the other calls
	// wait behind the burst's there, whatever execute's bulkheads do.
	Tenants bool
	// Control marks a scenario that measures what its burst costs the
	// other calls with every executor healthy: its figures are the floor
	// of the others', not a goal of their own.
	Control bool
}

// The tenants of a Bulkhead run with Tenants.
const (
	BurstTenant = "burst"
	OtherTenant = "other"
)

// BulkheadScenarios are the two scenarios and healthy-burst, the
// control of dead-executor: the same burst to a group whose executor
// answers at once. What dead-executor's other calls wait beyond the
// control's is the dead group's doing; what the control shows too is the
// burst's (the gates up to parse do not know a call's tool).
func BulkheadScenarios() []Bulkhead {
	return []Bulkhead{
		{Name: "slow-tool", About: "300 calls to a tool whose executor takes 1 s, " + OtherTool + " at 20/s", Tool: SlowTool, Burst: 300, OtherRate: 20, Alone: 5 * time.Second},
		{Name: "dead-executor", About: "3,000 calls to a group with no responders, back after 20 s, " + OtherTool + " at 20/s", Tool: DeadTool, Burst: 3000, OtherRate: 20, Alone: 5 * time.Second, Down: 20 * time.Second},
		{Name: "healthy-burst", About: "dead-executor's control: 3,000 calls to a group whose executor answers at once, " + OtherTool + " at 20/s", Tool: FastTool, Burst: 3000, OtherRate: 20, Alone: 5 * time.Second, Control: true},
	}
}

// BulkheadFigures are what a Bulkhead run measured.
type BulkheadFigures struct {
	OtherAlone, OtherDuring Stats
	// OtherWaiting is OtherDuring's calls published after the burst's last
	// call left parse and, with Down, before the executor came back: while
	// the burst's calls wait in their own group (dead-executor) or run
	// (the control), once every gate knows their tool. What OtherDuring
	// adds to it is the burst's pass through the gates up to parse.
	OtherWaiting Stats
	// Burst is the burst's calls, publish to result (how long they waited).
	Burst Stats
	// CircuitOpened is from the burst's first publish to the first time
	// the burst group's durable was seen paused; 0: never seen.
	CircuitOpened time.Duration
	// Back is from the executor's return to the burst's last result.
	Back time.Duration
	// Parsed is from the burst's first publish to the last of its calls
	// leaving parse, the last gate that does not know a call's tool: with
	// one tenant (no lanes) those gates are first in, first out, so a call
	// published just after the burst waits about that long whatever its
	// group, before any bulkhead can tell it from the burst.
	Parsed time.Duration
	// Executed and Failed count the burst's results by outcome; Lost the
	// burst calls without a result; Twice the calls the executor ran more
	// than once, and Duplicates results beyond one.
	Executed, Failed, Lost, Twice, Duplicates int
	// Failures are the burst's failed results by failure class, and
	// FirstError the first one's first error.
	Failures   map[string]int
	FirstError string
	// PeakConcurrency is the most calls the burst's executor ran at once.
	PeakConcurrency int
	// SlowestOther is where the slowest 1 % of OtherTool's calls during the
	// burst spent their time, averaged: by the stage that recorded the end
	// of each stretch of their history (the first stretch, from publish to
	// accumulate's record, is the wait to be ingested).
	SlowestOther []StageTime
}

// StageTime is a stretch of a call's life ended by Stage.
type StageTime struct {
	Stage string
	Time  time.Duration
}

// Executor is a bench executor that takes Delay per call and counts what
// it ran.
type Executor struct {
	Delay time.Duration

	mu       sync.Mutex
	inFlight int
	peak     int
	runs     map[string]int
}

// Serve is a toolserver.Func.
func (x *Executor) Serve(ctx context.Context, c toolserver.Call) (any, error) {
	x.mu.Lock()
	if x.runs == nil {
		x.runs = map[string]int{}
	}
	x.runs[c.ID]++
	x.inFlight++
	x.peak = max(x.peak, x.inFlight)
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		x.inFlight--
		x.mu.Unlock()
	}()
	if x.Delay > 0 {
		select {
		case <-time.After(x.Delay):
		case <-ctx.Done():
		}
	}
	return map[string]bool{"ok": true}, nil
}

// twice counts the calls run more than once, and the peak.
func (x *Executor) counts() (twice, peak int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, n := range x.runs {
		if n > 1 {
			twice++
		}
	}
	return twice, x.peak
}

// Run runs b on a running pipeline where x serves b.Tool (after revive,
// when b.Down > 0: revive makes it serve).
func (b Bulkhead) Run(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, prefix string, x *Executor, revive func() error) (BulkheadFigures, error) {
	var mu sync.Mutex
	sent, got := map[string]time.Time{}, map[string]time.Time{}
	hist := map[string][]wire.Step{}
	f := BulkheadFigures{Failures: map[string]int{}}
	burstLeft := b.Burst
	burstDone := make(chan struct{})
	var parsed time.Time // the last burst call's parse step
	sub, err := nc.Subscribe(streams.ResultsAll(), func(m *nats.Msg) {
		at := time.Now()
		rid := wire.ResultsResponseID(m.Subject)
		var r struct {
			Status  wire.Status `json:"status"`
			Failure wire.Status `json:"failure"`
			Errors  []string    `json:"errors"`
			History []wire.Step `json:"history"`
		}
		_ = json.Unmarshal(m.Data, &r)
		mu.Lock()
		defer mu.Unlock()
		if _, ok := sent[rid]; !ok {
			return
		}
		burst := strings.HasPrefix(rid, prefix+"b")
		if _, dup := got[rid]; dup {
			if burst {
				f.Duplicates++
			}
			return
		}
		got[rid] = at
		if !burst {
			hist[rid] = r.History
			return
		}
		parsed = maxTime(parsed, lastAt(r.History, streams.Parse))
		if r.Status == wire.Executed {
			f.Executed++
		} else {
			f.Failed++
			f.Failures[string(r.Status)+"/"+string(r.Failure)]++
			if f.FirstError == "" && len(r.Errors) > 0 {
				f.FirstError = r.Errors[0]
			}
		}
		if burstLeft--; burstLeft == 0 {
			close(burstDone)
		}
	})
	if err != nil {
		return f, err
	}
	defer sub.Unsubscribe()
	sub.SetPendingLimits(-1, -1)
	publish := func(rid, tool, args, tenant string) error {
		subject := streams.SubjectInResponse
		if b.Tenants {
			subject = wire.InTenantClaimed(tenant, rid) // as the tenant's producer publishes (pkg/producer)
		}
		m := chatMsg(subject, rid, tool, args)
		mu.Lock()
		sent[rid] = time.Now()
		mu.Unlock()
		_, err := js.PublishMsgAsync(m, jetstream.WithMsgID(rid))
		return err
	}
	stop := make(chan struct{})
	otherErr := make(chan error, 1)
	go func() {
		tick := time.NewTicker(time.Duration(float64(time.Second) / b.OtherRate))
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				otherErr <- nil
				return
			case <-tick.C:
			}
			if err := publish(prefix+"o"+strconv.Itoa(i), OtherTool, `{"city":"Oslo"}`, OtherTenant); err != nil {
				otherErr <- err
				return
			}
		}
	}()
	select {
	case <-time.After(b.Alone):
	case <-ctx.Done():
	}
	burstStart := time.Now()
	// The circuit, as an operator sees it: the group's durable paused.
	watchDone := make(chan struct{})
	opened := make(chan time.Duration, 1)
	go func() {
		defer close(watchDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			ci, err := js.Consumer(ctx, streams.StreamExecute, streams.ExecuteDurable(b.Tool))
			if err != nil {
				continue
			}
			if ci.CachedInfo().Paused {
				opened <- time.Since(burstStart)
				return
			}
		}
	}()
	for i := range b.Burst {
		if err := publish(prefix+"b"+strconv.Itoa(i), b.Tool, `{"n":`+strconv.Itoa(i)+`}`, BurstTenant); err != nil {
			close(stop)
			return f, err
		}
	}
	var back time.Time
	if b.Down > 0 {
		select {
		case <-time.After(time.Until(burstStart.Add(b.Down))):
		case <-ctx.Done():
		}
		back = time.Now()
		if err := revive(); err != nil {
			close(stop)
			return f, err
		}
	}
	select {
	case <-burstDone:
	case <-time.After(15 * time.Minute):
	case <-ctx.Done():
	}
	burstEnd := time.Now()
	close(stop)
	<-watchDone
	select {
	case d := <-opened:
		f.CircuitOpened = d
	default:
	}
	if err := <-otherErr; err != nil {
		return f, err
	}
	awaitOutcomes(&mu, sent, got, 30*time.Second)
	mu.Lock()
	defer mu.Unlock()
	f.OtherAlone, f.OtherDuring = Stats{Name: OtherTool + " alone"}, Stats{Name: OtherTool + " during"}
	f.Burst = Stats{Name: b.Tool, Count: b.Burst}
	var last time.Time
	var during []string
	for rid, at0 := range sent {
		at, ok := got[rid]
		burst := strings.HasPrefix(rid, prefix+"b")
		switch {
		case !ok && burst:
			f.Lost++
		case !ok:
		case burst:
			f.Burst.Latencies = append(f.Burst.Latencies, at.Sub(at0))
			last = maxTime(last, at)
		case at0.Before(burstStart):
			f.OtherAlone.Latencies = append(f.OtherAlone.Latencies, at.Sub(at0))
		case at0.Before(burstEnd):
			f.OtherDuring.Latencies = append(f.OtherDuring.Latencies, at.Sub(at0))
			during = append(during, rid)
		}
	}
	f.SlowestOther = slowest(during, sent, got, hist)
	f.OtherWaiting = sentBetween(during, sent, got, parsed, back)
	f.OtherAlone.Count, f.OtherDuring.Count = len(f.OtherAlone.Latencies), len(f.OtherDuring.Latencies)
	f.OtherAlone.Elapsed, f.OtherDuring.Elapsed = b.Alone, burstEnd.Sub(burstStart)
	f.Burst.Elapsed = last.Sub(burstStart)
	if !back.IsZero() {
		f.Back = last.Sub(back)
	}
	if !parsed.IsZero() {
		f.Parsed = parsed.Sub(burstStart)
	}
	f.Twice, f.PeakConcurrency = x.counts()
	return f, nil
}

// sentBetween is the latencies of rids published after from and, unless
// to is zero, before to; none when from is zero (the burst never left
// parse).
func sentBetween(rids []string, sent, got map[string]time.Time, from, to time.Time) Stats {
	s := Stats{Name: OtherTool + " after parse"}
	for _, rid := range rids {
		if at0 := sent[rid]; !from.IsZero() && at0.After(from) && (to.IsZero() || at0.Before(to)) {
			s.Latencies = append(s.Latencies, got[rid].Sub(at0))
		}
	}
	s.Count = len(s.Latencies)
	return s
}

// lastAt is the time of the last step of hist at stage; zero: none.
func lastAt(hist []wire.Step, stage string) time.Time {
	var at time.Time
	for _, st := range hist {
		if st.Stage == stage {
			at = maxTime(at, st.At)
		}
	}
	return at
}

// slowest averages where the slowest 1 % (at least one) of rids spent
// their time, stretch by stretch of their histories.
func slowest(rids []string, sent, got map[string]time.Time, hist map[string][]wire.Step) []StageTime {
	if len(rids) == 0 {
		return nil
	}
	slices.SortFunc(rids, func(a, b string) int { return cmp.Compare(got[b].Sub(sent[b]), got[a].Sub(sent[a])) })
	rids = rids[:max(1, len(rids)/100)]
	var order []string
	sum := map[string]time.Duration{}
	for _, rid := range rids {
		prev := sent[rid]
		for _, st := range hist[rid] {
			if _, ok := sum[st.Stage]; !ok {
				order = append(order, st.Stage)
			}
			sum[st.Stage] += st.At.Sub(prev)
			prev = st.At
		}
		if _, ok := sum["result"]; !ok {
			order = append(order, "result")
		}
		sum["result"] += got[rid].Sub(prev)
	}
	out := make([]StageTime, 0, len(order))
	for _, s := range order {
		out = append(out, StageTime{Stage: s, Time: sum[s] / time.Duration(len(rids))})
	}
	return out
}
