package publish

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/metrics"
)

// overview is `status` without an operand: each executor group's
// bulkhead and circuit (issue 38), read from the group durables' consumer
// info, which every execute replica shares: no store of its own.
type overview struct {
	ExecutorGroups []groupView `json:"executor_groups"`
	// Tenants are the fairness lanes of the tenant list (issue 37), none
	// without one: each listed tenant's backlog, its oldest waiting input
	// and its share of execute.
	Tenants []tenantView `json:"tenants"`
}

// tenantView is one lane of listed tenants as status shows it.
type tenantView struct {
	metrics.TenantLane
	// Share is the lane's percent of the calls execute's lanes delivered
	// since they were applied.
	Share float64 `json:"share_of_execute_pct"`
}

// groupView is one group as status shows it.
type groupView struct {
	Group       string     `json:"group"`
	Concurrency int        `json:"concurrency"` // configured; 0: unknown
	InUse       int        `json:"in_use"`      // delivered, not acknowledged
	Queue       uint64     `json:"queue"`       // waiting for the group
	Circuit     string     `json:"circuit"`     // closed, half_open, open
	OpenUntil   *time.Time `json:"open_until,omitempty"`
}

// readOverview reads every executor group of js.
func readOverview(ctx context.Context, js jetstream.JetStream) (overview, error) {
	gs, err := metrics.JetStreamExecutorGroups(js)(ctx)
	if err != nil {
		return overview{}, fmt.Errorf("status: reading the executor groups: %w", err)
	}
	ov := overview{ExecutorGroups: []groupView{}}
	for _, g := range gs {
		v := groupView{Group: g.Group, Concurrency: g.Concurrency, InUse: g.InFlight, Queue: g.Queue, Circuit: g.Circuit}
		if g.Circuit == metrics.CircuitOpen && !g.PausedUntil.IsZero() {
			at := g.PausedUntil.UTC().Truncate(time.Second)
			v.OpenUntil = &at
		}
		ov.ExecutorGroups = append(ov.ExecutorGroups, v)
	}
	ls, err := metrics.JetStreamTenantLanes(js, nil)(ctx)
	if err != nil {
		return overview{}, fmt.Errorf("status: reading the fairness lanes: %w", err)
	}
	ov.Tenants = tenantViews(ls)
	return ov, nil
}

// tenantViews adds each lane's share of what execute's lanes delivered.
func tenantViews(ls []metrics.TenantLane) []tenantView {
	var total uint64
	for _, l := range ls {
		total += l.Delivered
	}
	out := []tenantView{}
	for _, l := range ls {
		v := tenantView{TenantLane: l}
		if total > 0 {
			v.Share = 100 * float64(l.Delivered) / float64(total)
		}
		out = append(out, v)
	}
	return out
}

// printTenants writes the lanes of the tenant list as a table.
func printTenants(w io.Writer, ts []tenantView, now time.Time) error {
	if len(ts) == 0 {
		return nil
	}
	fmt.Fprintf(w, "tenants (%d fairness lanes of the tenant list):\n", len(ts))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TENANT\tLANE\tBACKLOG\tOF WHICH BATCH\tOLDEST WAITING\tDELIVERED\tSHARE OF EXECUTE")
	for _, t := range ts {
		oldest := "-"
		if !t.Oldest.IsZero() {
			oldest = max(now.Sub(t.Oldest), 0).Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\t%d\t%.1f%%\n", strings.Join(t.Tenants, ", "), t.Lane, t.Backlog, t.Batch, oldest, t.Delivered, t.Share)
	}
	return tw.Flush()
}

// printOverview writes ov as tables.
func printOverview(w io.Writer, ov overview, now time.Time) error {
	if err := printGroups(w, ov, now); err != nil {
		return err
	}
	return printTenants(w, ov.Tenants, now)
}

// printGroups writes the executor groups.
func printGroups(w io.Writer, ov overview, now time.Time) error {
	if len(ov.ExecutorGroups) == 0 {
		_, err := fmt.Fprintln(w, "executor groups: none yet (a group appears when execute runs with a tool that names it; `toolgate tools ls` shows each tool's group)")
		return err
	}
	fmt.Fprintf(w, "executor groups (%d):\n", len(ov.ExecutorGroups))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  GROUP\tIN USE\tQUEUE\tCIRCUIT")
	for _, g := range ov.ExecutorGroups {
		conc := "?"
		if g.Concurrency > 0 {
			conc = fmt.Sprint(g.Concurrency)
		}
		fmt.Fprintf(tw, "  %s\t%d/%s\t%d\t%s\n", g.Group, g.InUse, conc, g.Queue, circuitText(g, now))
	}
	return tw.Flush()
}

// circuitText says a group's circuit in words.
func circuitText(g groupView, now time.Time) string {
	switch g.Circuit {
	case metrics.CircuitOpen:
		s := "OPEN: its calls wait, none are sent"
		if g.OpenUntil != nil {
			s += fmt.Sprintf("; a probe after %s (in %s)", g.OpenUntil.Format(time.TimeOnly), max(g.OpenUntil.Sub(now), 0).Round(time.Second))
		}
		return s
	case metrics.CircuitHalfOpen:
		return "half-open: one probe call at a time"
	}
	return strings.ReplaceAll(g.Circuit, "_", "-")
}
