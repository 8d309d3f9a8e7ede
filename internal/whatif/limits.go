package whatif

import (
	"sort"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/gates"
	"github.com/toolgate/toolgate/internal/limit"
)

// metered is a call the gates would let run, kept until the window is read
// so the new definitions' limits are charged in time order (the input is
// read a subject at a time, not in one order): its record, the fate it
// would have had without limits, and what it would be charged.
type metered struct {
	rec     *Recorded
	at      time.Time
	seq     int
	would   Fate
	charges []limit.Charge
	wait    map[string]time.Duration
}

// meter holds out (a call the gates approved, of rec) for the limits when
// its tool has any, and reports whether it did; a call that cannot be
// metered is refused as the execute gate refuses it.
func (w *window) meter(rec *Recorded, out call.Envelope) bool {
	if out.Status != call.Approved {
		return false // dry runs and refusals are never charged
	}
	t, ok := w.ev.tools[out.ToolName]
	if !ok || len(t.Limits) == 0 {
		return false
	}
	m := metered{rec: rec, at: rec.CreatedAt, seq: len(w.metered), would: FateOf(out)}
	cs, err := gates.LimitCharges(out, t)
	if err != nil {
		m.would = Fate{Kind: Refused, Class: call.LimitExceeded, Why: why([]string{"the call could not be metered, so it was not run: " + err.Error()})}
	}
	m.charges = cs
	for _, l := range t.Limits {
		if l.Wait {
			if m.wait == nil {
				m.wait = map[string]time.Duration{}
			}
			m.wait[l.Def.Name] = l.MaxWait
		}
	}
	w.metered = append(w.metered, m)
	return true
}

// finish charges the held calls in time order against the new limits, in
// memory (limit.Meter; the real counters are never read nor touched, so
// each limit starts the window unused), and adds each to the report.
func (w *window) finish() {
	sort.SliceStable(w.metered, func(i, j int) bool { return w.metered[i].at.Before(w.metered[j].at) })
	m := limit.NewMeter()
	for _, c := range w.metered {
		would := c.would
		if would.Kind == Pass {
			if ex := m.Charge(c.at, c.charges, c.wait); ex != nil {
				would = Fate{Kind: Refused, Class: call.LimitExceeded, Limit: ex.Limit, Why: why([]string{ex.Message})}
			}
		}
		w.rep.Add(c.rec.Tool, c.rec.CallID, c.rec.Fate, c.rec.Status, would)
	}
	w.metered = nil
}
