package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/streams"
)

// metricFamily is one metric as the page lists it.
type metricFamily struct {
	name, kind, help string
	labels           []string
}

// metricFamilies gathers a fresh registry (metrics.New) with every watch a
// process attaches fed fixed numbers, one observation of each stage and
// one scrape, so every family of the registry has a series to describe.
// The Go runtime's and the process's own collectors (go_*, process_*) are
// left out.
func metricFamilies() ([]metricFamily, error) {
	m := metrics.New()
	st := streams.Names()
	stopC := m.WatchConsumersOldest(st,
		func(context.Context, string) (*jetstream.ConsumerInfo, error) {
			return &jetstream.ConsumerInfo{NumPending: 1}, nil
		},
		func(context.Context, string, *jetstream.ConsumerInfo) (time.Time, error) { return time.Unix(1, 0), nil })
	defer stopC()
	stopA := m.WatchApprovals(func(context.Context) (int, time.Time, error) { return 1, time.Unix(1, 0), nil })
	defer stopA()
	stopD := m.WatchDeadLetters(func(context.Context) (map[string]uint64, error) {
		return map[string]uint64{streams.DLQ(st[0], "max_deliver"): 1}, nil
	})
	defer stopD()
	stopG := m.WatchExecutorGroups(func(context.Context) ([]metrics.ExecutorGroup, error) {
		return []metrics.ExecutorGroup{{Group: "g", InFlight: 1, Queue: 1, Circuit: metrics.CircuitOpen}}, nil
	})
	defer stopG()
	stopT := m.WatchTenantLanes(func(context.Context) ([]metrics.TenantLane, error) {
		return []metrics.TenantLane{{Tenants: []string{"t"}, Backlog: 2, Batch: 1, Oldest: time.Unix(1, 0)}}, nil
	})
	defer stopT()
	m.KnownTools(func() []string { return []string{"t"} })
	m.LimitEvent("l", "charged", 0.5)
	m.CircuitTransition("g", metrics.CircuitOpen)
	m.Transition(streams.Execute, call.Envelope{Status: call.Executed, CreatedAt: time.Unix(1, 0)}) // the dwell histogram
	for _, s := range st {
		m.Observe(s, time.Millisecond, nil)
		m.Gap(s, 2*time.Millisecond)
	}
	m.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/metrics", nil))
	mfs, err := m.Registry().Gather()
	if err != nil {
		return nil, err
	}
	var out []metricFamily
	for _, mf := range mfs {
		name := mf.GetName()
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		f := metricFamily{name: name, kind: strings.ToLower(mf.GetType().String()), help: mf.GetHelp()}
		for _, mt := range mf.GetMetric() {
			for _, lp := range mt.GetLabel() {
				if !slices.Contains(f.labels, lp.GetName()) {
					f.labels = append(f.labels, lp.GetName())
				}
			}
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b metricFamily) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// metricsPage is metrics.md.
func metricsPage(string) (string, error) {
	fams, err := metricFamilies()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("Every metric a toolgate process serves on `/metrics` (the `--http` address), besides the Go runtime's `go_*` and the process's `process_*`. Gauges of consumers, approvals and dead letters are read from NATS at scrape time; a process whose NATS user may not read them reports none.\n\n")
	b.WriteString("| Metric | Type | Labels | Help |\n|---|---|---|---|\n")
	for _, f := range fams {
		var ls []string
		for _, l := range f.labels {
			ls = append(ls, code(l))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code(f.name), f.kind, strings.Join(ls, ", "), cell(f.help))
	}
	return b.String(), nil
}
