package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// Neighbour is the noisy-neighbour scenario (issue 37): a quiet tenant
// sends create_invoice calls at QuietRate, first alone for Alone, then while
// a burst of Burst calls is published as fast as the client allows. With
// BurstTenant == QuietTenant and BurstPriority batch it is the priority
// scenario: a batch backlog of the quiet tenant's own. With QuietRate 0 no
// quiet tenant sends anything: the burst alone, the pipeline's maximum for
// these calls on this rig, which the other scenarios' drain rate is
// measured against (issue 37: at least 90 % of it).
type Neighbour struct {
	QuietTenant, BurstTenant string
	BurstPriority            string // "": the tenant's default
	QuietRate                float64
	Alone                    time.Duration
	Burst                    int
	// QuietConn, when set, is the quiet tenant's own connection, as its
	// own producer has one: its publishes are not read by the server
	// behind the burst's on one socket. nil: the connection Run is given.
	QuietConn *nats.Conn
	// Gaps, when set, takes the stages' longest stand-stills since it was
	// last called (metrics.TakeLongestGaps): a quiet lane's input that
	// waited on the server with its worker ready shows there.
	Gaps func() map[string]time.Duration
}

// NeighbourFigures are what Neighbour measured.
type NeighbourFigures struct {
	QuietAlone, QuietDuring Stats // the quiet calls sent before the burst, and while it drained
	Burst                   Stats // the burst, from its first publish to its last result
	// QuietPublishing is the part of QuietDuring sent while the burst was
	// still being published (its publish acks outstanding): those calls
	// enter the ingest stream behind the burst's.
	QuietPublishing Stats
	// QuietStored is the rest of QuietDuring: the quiet calls sent once
	// the whole burst was stored, while it drained through the stages.
	QuietStored Stats
	Published   time.Duration // how long publishing the burst took
	Lost, Twice int           // responses without a result, and results beyond one
	// Where the quiet calls' time went, alone and during the burst: the
	// step 3 breakdown (stages.go) of their results' histories.
	QuietAloneStages, QuietDuringStages []StageRow
	QuietPublishingStages               []StageRow // of QuietPublishing
	// How long this process's goroutines waited to run (sched.go), alone
	// and during the burst.
	SchedAlone, SchedDuring Histo
	// The longest stand-still per stage (Neighbour.Gaps), alone and during
	// the burst; nil without Gaps.
	GapsAlone, GapsDuring map[string]time.Duration
}

// Run runs the scenario on a running pipeline.
func (n Neighbour) Run(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, prefix string) (NeighbourFigures, error) {
	var mu sync.Mutex
	sent, got := map[string]time.Time{}, map[string]time.Time{}
	quietResults := map[string][]byte{} // for the breakdowns, once it is known which were during the burst
	twice := 0
	burstLeft := n.Burst
	burstDone := make(chan struct{})
	sub, err := nc.Subscribe(streams.ResultsAll(), func(m *nats.Msg) {
		at := time.Now()
		rid := wire.ResultsResponseID(m.Subject)
		mu.Lock()
		defer mu.Unlock()
		if _, ok := sent[rid]; !ok {
			return
		}
		if _, dup := got[rid]; dup {
			twice++
			return
		}
		got[rid] = at
		if strings.HasPrefix(rid, prefix+"b") {
			if burstLeft--; burstLeft == 0 {
				close(burstDone)
			}
		} else {
			quietResults[rid] = m.Data
		}
	})
	if err != nil {
		return NeighbourFigures{}, err
	}
	defer sub.Unsubscribe()
	sub.SetPendingLimits(-1, -1)
	// The quiet tenant publishes through a JetStream context of its own
	// (on a connection of its own when given), as its own producer would:
	// the burst's outstanding publish acks do not stall it.
	quietNC := n.QuietConn
	if quietNC == nil {
		quietNC = nc
	}
	quietJS, err := jetstream.New(quietNC)
	if err != nil {
		return NeighbourFigures{}, err
	}
	publish := func(js jetstream.JetStream, rid, tenant, prio string, i int) error {
		// Each tenant's producer publishes on its own subject, which
		// accumulate's lanes filter on: a batch response on its batch
		// subject, an interactive one on its claimed subject, as
		// pkg/producer does.
		subject := wire.InResponseForPriority(tenant, prio)
		if prio != wire.PriorityBatch {
			subject = wire.InTenantClaimed(tenant, rid) // an interactive one on its claimed subject
		}
		m := chatMsg(subject, rid, "create_invoice", fmt.Sprintf(`{"customer_id":"cus_%d","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":%d,"price_cents":4900}]}`, i, 1+i%5))
		if prio != "" {
			m.Header.Set(streams.HeaderPriority, prio)
		}
		mu.Lock()
		sent[rid] = time.Now()
		mu.Unlock()
		_, err := js.PublishMsgAsync(m, jetstream.WithMsgID(rid))
		return err
	}
	// The quiet tenant, paced, until stop.
	stop := make(chan struct{})
	quietErr := make(chan error, 1)
	var burstStart, burstPublished, burstEnd time.Time
	go func() {
		if n.QuietRate <= 0 { // the burst alone
			<-stop
			quietErr <- nil
			return
		}
		tick := time.NewTicker(time.Duration(float64(time.Second) / n.QuietRate))
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				quietErr <- nil
				return
			case <-tick.C:
			}
			if err := publish(quietJS, prefix+"q"+strconv.Itoa(i), n.QuietTenant, streams.PriorityInteractive, i); err != nil {
				quietErr <- err
				return
			}
		}
	}()
	gaps := n.Gaps
	if gaps == nil {
		gaps = func() map[string]time.Duration { return nil }
	}
	gaps()
	sched0 := ReadSched()
	time.Sleep(n.Alone)
	sched1 := ReadSched()
	gapsAlone := gaps()
	burstStart = time.Now()
	for i := range n.Burst {
		for {
			err := publish(js, prefix+"b"+strconv.Itoa(i), n.BurstTenant, n.BurstPriority, i)
			if err == nil {
				break
			}
			if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				close(stop)
				return NeighbourFigures{}, err
			}
			// The burst is published as fast as the server acks it.
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(5 * time.Second):
			}
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
	}
	burstPublished = time.Now()
	select {
	case <-burstDone:
	case <-time.After(15 * time.Minute):
	case <-ctx.Done():
	}
	burstEnd = time.Now()
	sched2 := ReadSched()
	gapsDuring := gaps()
	close(stop)
	if err := <-quietErr; err != nil {
		return NeighbourFigures{}, err
	}
	awaitOutcomes(&mu, sent, got, 30*time.Second)
	mu.Lock()
	defer mu.Unlock()
	f := NeighbourFigures{QuietAlone: Stats{Name: "quiet tenant alone"}, QuietDuring: Stats{Name: "quiet tenant during the burst"}, Burst: Stats{Name: "burst", Count: n.Burst}, Twice: twice,
		QuietPublishing: Stats{Name: "  of them while it was published"}, QuietStored: Stats{Name: "  of them once it was stored"}, Published: burstPublished.Sub(burstStart),
		SchedAlone: sched1.Since(sched0), SchedDuring: sched2.Since(sched1), GapsAlone: gapsAlone, GapsDuring: gapsDuring}
	var last time.Time
	alone, during, publishing := newBreakdown(), newBreakdown(), newBreakdown()
	for rid, at0 := range sent {
		at, ok := got[rid]
		if !ok {
			f.Lost++
			continue
		}
		switch {
		case strings.HasPrefix(rid, prefix+"b"):
			last = maxTime(last, at)
		case at0.Before(burstStart):
			f.QuietAlone.Latencies = append(f.QuietAlone.Latencies, at.Sub(at0))
			alone.add(quietResults[rid], at0, at)
		case at0.Before(burstEnd):
			f.QuietDuring.Latencies = append(f.QuietDuring.Latencies, at.Sub(at0))
			during.add(quietResults[rid], at0, at)
			if at0.Before(burstPublished) {
				f.QuietPublishing.Latencies = append(f.QuietPublishing.Latencies, at.Sub(at0))
				publishing.add(quietResults[rid], at0, at)
			} else {
				f.QuietStored.Latencies = append(f.QuietStored.Latencies, at.Sub(at0))
			}
		}
	}
	f.QuietAloneStages, f.QuietDuringStages = alone.Rows(nil), during.Rows(nil)
	f.QuietPublishingStages = publishing.Rows(nil)
	f.QuietAlone.Count, f.QuietDuring.Count, f.QuietPublishing.Count = len(f.QuietAlone.Latencies), len(f.QuietDuring.Latencies), len(f.QuietPublishing.Latencies)
	f.QuietStored.Count = len(f.QuietStored.Latencies)
	f.QuietAlone.Elapsed, f.QuietDuring.Elapsed = n.Alone, burstEnd.Sub(burstStart)
	f.Burst.Elapsed = last.Sub(burstStart)
	return f, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// awaitOutcomes gives what is still on its way a moment: it returns once
// every response sent has its outcome in got, or after within. sent and
// got are guarded by mu.
func awaitOutcomes(mu *sync.Mutex, sent, got map[string]time.Time, within time.Duration) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		mu.Lock()
		missing := len(sent) - len(got)
		mu.Unlock()
		if missing == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
