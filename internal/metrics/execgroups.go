package metrics

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/streams"
)

// maxGroupSeries bounds the executor groups one scrape reports: groups come
// from tool definitions (streams.ValidGroup), but the label set must not
// grow without bound whatever the definitions say.
const maxGroupSeries = 500

// Circuit states of an executor group, as the stage's breaker names them.
const (
	CircuitClosed   = "closed"
	CircuitHalfOpen = "half_open"
	CircuitOpen     = "open"
)

// ExecutorGroup is one executor group's state as its durable tells it
// (issue 38): the durable is what every execute replica shares, so any
// process reading it sees the same group.
type ExecutorGroup struct {
	Group       string
	InFlight    int       // calls delivered and not acknowledged: the concurrency in use
	Queue       uint64    // calls waiting for the group
	Concurrency int       // configured (streams.GroupConcurrencyKey); 0: unknown
	MaxAck      int       // the durable's MaxAckPending now (1 while open or half-open)
	Circuit     string    // CircuitClosed, CircuitHalfOpen or CircuitOpen
	PausedUntil time.Time // while open: when the probe may go
}

// Configured is a group durable's configured concurrency, from its
// metadata; 0: unknown.
func Configured(ci *jetstream.ConsumerInfo) int {
	n, err := strconv.Atoi(ci.Config.Metadata[streams.GroupConcurrencyKey])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// CircuitOf is the circuit state a group's durable shows: paused is open
// (the breaker pauses it for the cool-down); not paused with MaxAckPending
// 1 while the group is configured for more is half-open (one probe at a
// time); anything else is closed. A group whose configured concurrency is
// unknown cannot show half-open.
func CircuitOf(ci *jetstream.ConsumerInfo) string {
	configured := Configured(ci)
	if until, ok := openUntil(ci); ok { // a fail-fast group's
		if time.Now().Before(until) {
			return CircuitOpen
		}
		return CircuitHalfOpen
	}
	switch {
	case ci.Paused:
		return CircuitOpen
	case configured > 1 && ci.Config.MaxAckPending == 1:
		return CircuitHalfOpen
	}
	return CircuitClosed
}

// openUntil is the end of a fail-fast group's cool-down, while its
// circuit is open (streams.GroupOpenUntilKey).
func openUntil(ci *jetstream.ConsumerInfo) (time.Time, bool) {
	v, ok := ci.Config.Metadata[streams.GroupOpenUntilKey]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

// ExecutorGroups returns every executor group's state; an argument so
// tests can feed numbers.
type ExecutorGroups func(ctx context.Context) ([]ExecutorGroup, error)

// JetStreamExecutorGroups reads the group durables of streams.StreamExecute
// and of execute's partition streams that exist in js, sorted by group: a
// group's in flight and queue are the sums over its durables in every
// partition (its lanes included); its concurrency, limit and circuit are
// its partition 0 durable's (the breaker pauses every partition's alike),
// or the first partition's that has it.
func JetStreamExecutorGroups(js jetstream.JetStream) ExecutorGroups {
	return func(ctx context.Context) ([]ExecutorGroup, error) {
		names := []string{streams.StreamExecute}
		more, err := streams.PartitionStreamNames(ctx, js, streams.Execute)
		if err != nil {
			return nil, err
		}
		names = append(names, more...)
		prefix := streams.ExecuteDurable("")
		var out []ExecutorGroup
		at := map[string]int{}          // group -> its index in out
		lanes := map[string][2]uint64{} // group -> its lanes' in flight and queue
		for i, name := range names {
			st, err := js.Stream(ctx, name)
			if err != nil {
				if i > 0 {
					continue // deleted since listed (streams apply --prune)
				}
				return nil, err
			}
			l := st.ListConsumers(ctx)
			for ci := range l.Info() {
				if grp, _, ok := streams.SplitExecuteLaneDurable(ci.Name); ok { // a fairness lane of the group
					n := lanes[grp]
					lanes[grp] = [2]uint64{n[0] + uint64(ci.NumAckPending), n[1] + ci.NumPending}
					continue
				}
				grp, ok := strings.CutPrefix(ci.Name, prefix)
				if !ok || !streams.ValidGroup(grp) {
					continue
				}
				if j, ok := at[grp]; ok { // the group in a further partition
					out[j].InFlight += ci.NumAckPending
					out[j].Queue += ci.NumPending
					continue
				}
				g := ExecutorGroup{Group: grp, InFlight: ci.NumAckPending, Queue: ci.NumPending,
					Concurrency: Configured(ci), MaxAck: ci.Config.MaxAckPending, Circuit: CircuitOf(ci)}
				if ci.Paused {
					g.PausedUntil = time.Now().Add(ci.PauseRemaining)
				} else if until, ok := openUntil(ci); ok && g.Circuit == CircuitOpen {
					g.PausedUntil = until
				}
				at[grp] = len(out)
				out = append(out, g)
			}
			if err := l.Err(); err != nil {
				return nil, err
			}
		}
		for i := range out {
			n := lanes[out[i].Group]
			out[i].InFlight += int(n[0])
			out[i].Queue += n[1]
		}
		slices.SortFunc(out, func(a, b ExecutorGroup) int { return strings.Compare(a.Group, b.Group) })
		return out, nil
	}
}

var (
	groupInFlightDesc = prometheus.NewDesc("toolgate_executor_group_in_flight",
		"Calls of the executor group delivered to execute and not yet acknowledged: its concurrency in use. Every process reports the same durable: aggregate with max.", []string{"group"}, nil)
	groupQueueDesc = prometheus.NewDesc("toolgate_executor_group_queue",
		"Calls waiting for the executor group (its durable's pending count); an open circuit's calls wait here.", []string{"group"}, nil)
	circuitStateDesc = prometheus.NewDesc("toolgate_executor_circuit_state",
		"The executor group's circuit: 0 closed, 1 half-open (one probe call), 2 open (its calls wait, none are sent).", []string{"group"}, nil)
)

// circuitValue is a state's gauge value.
func circuitValue(state string) float64 {
	switch state {
	case CircuitHalfOpen:
		return 1
	case CircuitOpen:
		return 2
	}
	return 0
}

type execGroups struct{ groups ExecutorGroups }

func (e *execGroups) Describe(ch chan<- *prometheus.Desc) {
	ch <- groupInFlightDesc
	ch <- groupQueueDesc
	ch <- circuitStateDesc
}

// Collect reports the groups when the stream answered within 2 seconds.
func (e *execGroups) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	gs, err := e.groups(ctx)
	if err != nil {
		return
	}
	n := 0
	for _, g := range gs {
		if n >= maxGroupSeries {
			break
		}
		if !streams.ValidGroup(g.Group) {
			continue
		}
		n++
		ch <- prometheus.MustNewConstMetric(groupInFlightDesc, prometheus.GaugeValue, float64(g.InFlight), g.Group)
		ch <- prometheus.MustNewConstMetric(groupQueueDesc, prometheus.GaugeValue, float64(g.Queue), g.Group)
		ch <- prometheus.MustNewConstMetric(circuitStateDesc, prometheus.GaugeValue, circuitValue(g.Circuit), g.Group)
	}
}

// WatchExecutorGroups reports every executor group's in-flight calls, queue
// and circuit on every scrape. The returned function stops reporting; a
// second watch is ignored.
func (m *Metrics) WatchExecutorGroups(groups ExecutorGroups) (stop func()) {
	return m.watch(&execGroups{groups: groups})
}

// newCircuitTransitions is toolgate_executor_circuit_transitions_total.
func newCircuitTransitions(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolgate_executor_circuit_transitions_total",
		Help: "Circuit state changes this process's breakers made, by executor group and the state entered (closed, half_open, open).",
	}, []string{"group", "state"})
	reg.MustRegister(c)
	return c
}

// CircuitTransition counts one change of group's circuit to state; it
// fits the stage's breaker hook.
func (m *Metrics) CircuitTransition(group, state string) {
	if !streams.ValidGroup(group) || (state != CircuitClosed && state != CircuitHalfOpen && state != CircuitOpen) {
		return
	}
	m.circuits.WithLabelValues(group, state).Inc()
}
