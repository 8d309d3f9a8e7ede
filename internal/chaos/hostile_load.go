package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// validLoad offers valid calls (bench.Mix's valid kinds, one call per
// response) and times each from its first publish to its result's first
// core delivery on toolgate.results.<rid>. It also counts core deliveries
// of every result, hostile ones included.
type validLoad struct {
	sub *nats.Subscription

	mu         sync.Mutex
	phase      map[string]string    // rid -> phase
	sent       map[string]time.Time // rid -> first publish attempt
	accepted   map[string]bool      // rid -> publish acked
	arrived    map[string]time.Time // rid -> first result delivered
	deliveries map[string]int       // result key -> core deliveries
	wg         sync.WaitGroup
}

func newValidLoad(nc *nats.Conn) (*validLoad, error) {
	l := &validLoad{phase: map[string]string{}, sent: map[string]time.Time{}, accepted: map[string]bool{},
		arrived: map[string]time.Time{}, deliveries: map[string]int{}}
	sub, err := nc.Subscribe(streams.ResultsAll(), func(m *nats.Msg) {
		now := time.Now()
		rid := wire.ResultsResponseID(m.Subject)
		var r struct {
			CallID string `json:"call_id"`
		}
		_ = json.Unmarshal(m.Data, &r)
		key := "response:" + rid
		if r.CallID != "" {
			key = r.CallID
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.deliveries[key]++
		if _, ok := l.arrived[rid]; !ok {
			l.arrived[rid] = now
		}
	})
	if err != nil {
		return nil, fmt.Errorf("chaos: subscribe results: %w", err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	l.sub = sub
	return l, nil
}

// validKinds are bench.Mix's valid kinds.
func validKinds() []bench.Kind {
	var ks []bench.Kind
	for _, k := range bench.Mix() {
		if k.Name == "valid" {
			ks = append(ks, k)
		}
	}
	return ks
}

// run offers rate calls per second for d; each publish runs in its own
// goroutine (retried with the same Nats-Msg-Id for up to a minute while the
// child restarts), so a slow publish does not delay the schedule. It
// returns once every publish was acked or given up.
func (l *validLoad) run(ctx context.Context, js jetstream.JetStream, phase, prefix string, d time.Duration, rate float64) {
	n := int(d.Seconds() * rate)
	interval := time.Duration(float64(time.Second) / rate)
	kinds := validKinds()
	start := time.Now()
	for i := range n {
		if w := time.Until(start.Add(time.Duration(i) * interval)); w > 0 {
			select {
			case <-time.After(w):
			case <-ctx.Done():
				l.wg.Wait()
				return
			}
		}
		k := kinds[i%len(kinds)]
		rid := prefix + "-" + strconv.Itoa(i)
		m := nats.NewMsg(streams.SubjectInResponse)
		m.Data = k.Body(rid, i)
		m.Header.Set(streams.HeaderProvider, k.Provider)
		m.Header.Set(streams.HeaderResponseID, rid)
		l.mu.Lock()
		l.phase[rid], l.sent[rid] = phase, time.Now()
		l.mu.Unlock()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			if publishRetry(ctx, js, m, rid, time.Minute) == nil {
				l.mu.Lock()
				l.accepted[rid] = true
				l.mu.Unlock()
			}
		}()
	}
	l.wg.Wait()
}

// publishRetry publishes m with Nats-Msg-Id id until JetStream acks it or
// bound has passed (de-duplication makes the retry safe).
func publishRetry(ctx context.Context, js jetstream.JetStream, m *nats.Msg, id string, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := js.PublishMsg(pctx, m, jetstream.WithMsgID(id))
		cancel()
		// A message over the stream's size limit is refused for good.
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) || errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// wait polls until every accepted call of phase had a result delivered, or
// total has passed.
func (l *validLoad) wait(ctx context.Context, phase string, total time.Duration) error {
	return testenv.Poll(total, 100*time.Millisecond, func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		n := 0
		for rid, ph := range l.phase {
			if _, ok := l.arrived[rid]; ph == phase && l.accepted[rid] && !ok {
				n++
			}
		}
		if n > 0 {
			return fmt.Errorf("%d %s calls without a result", n, phase)
		}
		return ctx.Err()
	})
}

// missing lists accepted valid calls with no stored result in rs.
func (l *validLoad) missing(rs *resultSet) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for rid := range l.accepted {
		if len(rs.byRID(rid)) == 0 {
			out = append(out, rid)
		}
	}
	return out
}

// coreDeliveries is how often key's result was delivered to the core
// subscriber.
func (l *validLoad) coreDeliveries(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deliveries[key]
}

// ValidFigures are one phase's valid calls.
type ValidFigures struct {
	Offered, Accepted, Results int
	Lost                       int // accepted, no result
	Refused                    int // never acked within the retry bound
	Duplicates                 int // more than one stored result, or more than one core delivery
	Wrong                      int // a result other than executed
	P50, P99                   time.Duration
}

// judge checks every valid call against the stored results: exactly one,
// executed; latency from first publish to first delivery (or, when the core
// subscriber missed it across a restart, to the result's storage time).
func (l *validLoad) judge(rs *resultSet) map[string]ValidFigures {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]ValidFigures{}
	lat := map[string][]time.Duration{}
	for rid, ph := range l.phase {
		f := out[ph]
		f.Offered++
		got := rs.byRID(rid)
		switch {
		case !l.accepted[rid]:
			f.Refused++
		case len(got) == 0:
			f.Lost++
		}
		if l.accepted[rid] {
			f.Accepted++
		}
		if len(got) > 0 {
			f.Results++
			if len(got) > 1 || l.deliveries[got[0].key()] > 1 {
				f.Duplicates++
			}
			if got[0].Status != "executed" {
				f.Wrong++
			}
			at, ok := l.arrived[rid]
			if !ok {
				at = got[0].At
			}
			lat[ph] = append(lat[ph], at.Sub(l.sent[rid]))
		}
		out[ph] = f
	}
	for ph, ls := range lat {
		sort.Slice(ls, func(i, j int) bool { return ls[i] < ls[j] })
		f := out[ph]
		f.P50, f.P99 = quantile(ls, 0.50), quantile(ls, 0.99)
		out[ph] = f
	}
	return out
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func (l *validLoad) close() { _ = l.sub.Unsubscribe() }
