package limit

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// Meter is the limits' usage held in memory, for a replay of recorded
// calls (the what-if): it charges as the store does — a sliding window per
// limit and key, every charge of a call or none, a held call (on_exceed:
// wait) charged when the window lets it fit if that is within max_wait —
// and never touches the real counters. It does not bound keys (a replay
// holds a window's calls anyway), so it never evicts to the overflow; the
// store's eviction only makes a limit stricter. Not safe for concurrent
// use; calls are charged in time order.
type Meter struct {
	logs map[meterKey][]meterCharge
}

type meterKey struct{ limit, key string }

type meterCharge struct {
	at time.Time
	w  int64
}

// Exceeded is a call the meter refused: the limit that was used up and
// what the model would have been told (never the key).
type Exceeded struct {
	Limit   string
	Message string
}

func (e *Exceeded) Error() string { return e.Message }

// NewMeter is an empty meter: every limit unused.
func NewMeter() *Meter { return &Meter{logs: map[meterKey][]meterCharge{}} }

// Charge charges cs for a call arriving at at, all or none. wait is each
// charge's limit's on_exceed: wait bound (0: reject), by limit name. It
// returns nil when the call runs, or the limit it exceeds.
func (m *Meter) Charge(at time.Time, cs []Charge, wait map[string]time.Duration) *Exceeded {
	for _, c := range cs { // what no later call can see either: calls come in time order
		k := meterKey{c.Limit, c.Key}
		log := m.logs[k]
		cut := at.Add(-c.Window)
		m.logs[k] = log[sort.Search(len(log), func(i int) bool { return log[i].at.After(cut) }):]
	}
	when := at
	for {
		c, used, passAt, ok := m.fits(when, cs)
		if ok {
			break
		}
		maxWait := wait[c.Limit]
		if passAt.IsZero() || maxWait <= 0 || passAt.After(at.Add(maxWait)) {
			return &Exceeded{Limit: c.Limit, Message: message(c, used, passAt)}
		}
		when = passAt // held: it is tried again once the window lets it fit
	}
	for _, c := range cs {
		k := meterKey{c.Limit, c.Key}
		log := m.logs[k]
		i := sort.Search(len(log), func(i int) bool { return log[i].at.After(when) })
		m.logs[k] = slices.Insert(log, i, meterCharge{at: when, w: c.Weight})
	}
	return nil
}

// fits reports whether every charge fits at now; when one does not, that
// charge, its usage and when it would fit (zero: never). A held call's
// charge, made at a later moment, counts from the call's arrival: it
// reserves its place, as a replay in arrival order cannot know which of
// the two the store would have let in first, and so errs stricter.
func (m *Meter) fits(now time.Time, cs []Charge) (Charge, int64, time.Time, bool) {
	for _, c := range cs {
		k := meterKey{c.Limit, c.Key}
		log := m.logs[k]
		cut := now.Add(-c.Window) // the store drops charges at or before it
		log = log[sort.Search(len(log), func(i int) bool { return log[i].at.After(cut) }):]
		var used int64
		for _, e := range log {
			used += e.w
		}
		if used+c.Weight <= c.Max {
			continue
		}
		var passAt time.Time
		if c.Weight <= c.Max {
			need, freed := used+c.Weight-c.Max, int64(0)
			for _, e := range log { // in time order
				if freed += e.w; freed >= need {
					passAt = e.at.Add(c.Window + time.Millisecond)
					break
				}
			}
		}
		return c, used, passAt, false
	}
	return Charge{}, 0, time.Time{}, true
}

// message is what the execute gate tells the model of a call a limit
// refused.
func message(c Charge, used int64, passAt time.Time) string {
	if passAt.IsZero() {
		return fmt.Sprintf("limit %s: at most %d per %s; this call alone needs more, so it can never fit", c.Limit, c.Max, c.Window)
	}
	return fmt.Sprintf("limit %s: %d of %d per %s used; this call fits from %s", c.Limit, used, c.Max, c.Window, passAt.UTC().Format(time.RFC3339))
}
