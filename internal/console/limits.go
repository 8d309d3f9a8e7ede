package console

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/limit"
	"github.com/toolgate/toolgate/internal/pipeline"
)

// maxHeldShown bounds the held calls the limits page lists.
const maxHeldShown = 200

// limitRow is one limit on the limits page: its definition (from the tools
// bucket), its use (this process's metrics, when it runs the pipeline) and
// the calls it holds now (their status records).
type limitRow struct {
	Name, Key, Window, Max, OnExceed, MaxWait string
	Tools                                     []string
	// Charged, Rejected, Waited count its events since this process
	// started; Fill is the usage over the maximum of the key it charged
	// last, in percent. Valid when the page's Metrics is.
	Charged, Rejected, Waited float64
	Fill                      float64
	Held                      []heldCall
}

// heldCall is a call a limit holds (on_exceed: wait).
type heldCall struct {
	CallID, Tool, Why string
	Since, Next       time.Time
}

type limitsView struct {
	Limits []limitRow
	// Metrics: the counts come from the pipeline in this process (toolgate
	// up). A console of its own has none; per-key usage lives in the
	// idempotency store, which no console user may read.
	Metrics   bool
	Scanned   bool // the status records were read for held calls
	HeldTotal int
	Bad       []string // definitions that could not be read
}

// limitsPage shows every limit of the registered tools, what it used and
// what it holds. It reads the tools bucket and the status records, as the
// tools and calls pages do, and never a key (keys are made of tenants and
// arguments): any viewer may see it.
func (s *Server) limitsPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	t := s.toolCache(ctx)
	v := limitsView{}
	for k, why := range t.bad {
		v.Bad = append(v.Bad, k+": "+why)
	}
	sort.Strings(v.Bad)
	byName := map[string]*limitRow{}
	for name, d := range t.defs {
		for _, l := range d.Limits {
			row, ok := byName[l.Name]
			if !ok {
				row = newLimitRow(l)
				byName[l.Name] = row
			}
			row.Tools = append(row.Tools, name)
		}
	}
	if s.cfg.Metrics != nil {
		v.Metrics = limitMetrics(s.cfg.Metrics.Gather, byName)
	}
	held, _, err := s.scanCalls(ctx, func(rec pipeline.StatusRecord) bool {
		return rec.Waiting != nil && rec.Waiting.For == pipeline.WaitLimit && !rec.Status.Terminal()
	}, maxScan)
	if err == nil {
		v.Scanned = true
		for _, rec := range held {
			row, ok := byName[rec.Waiting.Limit]
			if !ok { // a limit removed since: still shown, it holds calls
				row = &limitRow{Name: rec.Waiting.Limit}
				byName[row.Name] = row
			}
			v.HeldTotal++
			if len(row.Held) < maxHeldShown {
				row.Held = append(row.Held, heldCall{CallID: rec.CallID, Tool: rec.Tool, Why: rec.Waiting.Detail, Since: rec.Waiting.Since, Next: rec.Waiting.Next})
			}
		}
	}
	for _, row := range byName {
		sort.Strings(row.Tools)
		v.Limits = append(v.Limits, *row)
	}
	sort.Slice(v.Limits, func(i, j int) bool { return v.Limits[i].Name < v.Limits[j].Name })
	s.render(w, r, "limits", "Limits", v)
}

func newLimitRow(l limit.Limit) *limitRow {
	row := &limitRow{Name: l.Name, Key: l.Key, Window: l.Window, OnExceed: l.OnExceed, MaxWait: l.MaxWait}
	if row.Key == "" {
		row.Key = "tenant"
	}
	if row.OnExceed == "" {
		row.OnExceed = limit.Reject
	}
	switch {
	case l.Count == 1:
		row.Max = "1 call"
	case l.Count > 0:
		row.Max = fmt.Sprintf("%d calls", l.Count)
	default:
		row.Max = fmt.Sprintf("%d of %s", l.Max, l.Weight)
	}
	return row
}

// limitMetrics fills rows from the limit metrics of gather; false when
// they cannot be read.
func limitMetrics(gather func() ([]*dto.MetricFamily, error), rows map[string]*limitRow) bool {
	fams, err := gather()
	if err != nil {
		return false
	}
	label := func(m *dto.Metric, name string) string {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			row := rows[label(m, "limit")]
			if row == nil {
				continue
			}
			switch f.GetName() {
			case "toolgate_limit_events_total":
				n := m.GetCounter().GetValue()
				switch label(m, "event") {
				case "charged":
					row.Charged = n
				case "rejected":
					row.Rejected = n
				case "waited":
					row.Waited = n
				}
			case "toolgate_limit_fill_ratio":
				row.Fill = 100 * m.GetGauge().GetValue()
			}
		}
	}
	return true
}

// limitMention is which limit held or rejected a call, for its story.
type limitMention struct {
	Name, How string
}

// limitOf reads rec for the limit that holds it now, rejected it, or held
// it before it went on. Limit messages name the limit, never the key.
func limitOf(rec pipeline.StatusRecord) *limitMention {
	if w := rec.Waiting; w != nil && w.For == pipeline.WaitLimit && w.Limit != "" {
		return &limitMention{Name: w.Limit, How: "held by"}
	}
	if rec.Status == call.LimitExceeded || rec.Failure == call.LimitExceeded {
		for _, e := range rec.Errors {
			if name, ok := limitNamed(e); ok {
				return &limitMention{Name: name, How: "rejected by"}
			}
		}
	}
	for i := len(rec.History) - 1; i >= 0; i-- {
		if note, ok := strings.CutPrefix(rec.History[i].Note, pipeline.WaitNotePrefix); ok {
			if name, ok := limitNamed(note); ok {
				return &limitMention{Name: name, How: "held, then let go, by"}
			}
		}
	}
	return nil
}

// limitNamed reads the name out of "limit NAME: ..." (the execute gate's
// limitMessage).
func limitNamed(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, "limit ")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, ":")
	if !ok || !limit.ValidName(name) {
		return "", false
	}
	return name, true
}
