package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PendingApprovals returns how many calls wait for a human decision and
// when the oldest of them asked (zero: none); an argument so tests can feed
// numbers.
type PendingApprovals func(ctx context.Context) (n int, oldest time.Time, err error)

var (
	approvalsPendingDesc = prometheus.NewDesc("toolgate_approvals_pending",
		"Calls waiting for a human decision (pending records in the approvals bucket); every process reports the same bucket, so aggregate with max.", nil, nil)
	approvalOldestDesc = prometheus.NewDesc("toolgate_approval_oldest_pending_seconds",
		"Age of the oldest pending approval request, 0 when none; it ends approval_expired at the approval TTL (15 min by default).", nil, nil)
)

type approvals struct {
	pending PendingApprovals
	now     func() time.Time
}

func (a *approvals) Describe(ch chan<- *prometheus.Desc) {
	ch <- approvalsPendingDesc
	ch <- approvalOldestDesc
}

// Collect reports the bucket when it was read within 2 seconds (a process
// whose NATS user may not read it reports nothing).
func (a *approvals) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, oldest, err := a.pending(ctx)
	if err != nil {
		return
	}
	age := 0.0
	if n > 0 && !oldest.IsZero() {
		age = max(a.now().Sub(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(approvalsPendingDesc, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(approvalOldestDesc, prometheus.GaugeValue, age)
}

// WatchApprovals reports the pending approvals on every scrape. The
// returned function stops reporting; a second watch is ignored.
func (m *Metrics) WatchApprovals(pending PendingApprovals) (stop func()) {
	return m.watch(&approvals{pending: pending, now: time.Now})
}
