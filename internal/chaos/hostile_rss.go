package chaos

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// RSSReturnSlack is what RSS may keep above its baseline after the attack:
// the bound is max(2 × baseline, baseline + RSSReturnSlack). A doubling
// leaves room for the caches and pools a Go program keeps once it has been
// busy (a 64 MiB baseline may end at 128 MiB); the additive floor keeps a
// small baseline from making the bound tighter than the garbage collector's
// own swing (GOGC=100 lets the heap reach twice what is live before a
// cycle). What the issue saw, 892 MiB against 64, is far outside either.
const RSSReturnSlack = 64 << 20

// rssReturnBound is the most RSS may be at the end of the after phase.
func rssReturnBound(baseline int64) int64 {
	return max(2*baseline, baseline+RSSReturnSlack)
}

// MemFigures are the child's memory at one point of the soak: VmRSS and
// what the Go runtime says of its heap (its /metrics go_memstats_*).
type MemFigures struct {
	RSS      int64 // VmRSS
	InUse    int64 // go_memstats_heap_inuse_bytes: spans holding objects
	Idle     int64 // go_memstats_heap_idle_bytes: free spans, released or not
	Released int64 // go_memstats_heap_released_bytes: idle spans given back to the OS
	Sys      int64 // go_memstats_sys_bytes: all the runtime got from the OS
	NextGC   int64 // go_memstats_next_gc_bytes: the heap size of the next collection
	GCs      int64 // go_gc_duration_seconds_count: collections so far
	Scraped  bool  // the metrics answered
}

// Held is idle heap the runtime keeps without giving it back.
func (m MemFigures) Held() int64 { return m.Idle - m.Released }

// Other is RSS beyond the heap's resident spans (stacks, runtime
// structures, binary text, C or mmapped memory).
func (m MemFigures) Other() int64 { return m.RSS - m.InUse - m.Held() }

// memFigures reads go_memstats from a /metrics text beside rss.
func memFigures(rss int64, metrics string) MemFigures {
	m := MemFigures{RSS: rss}
	for _, l := range strings.Split(metrics, "\n") {
		name, val, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_memstats_heap_inuse_bytes":
			m.InUse, m.Scraped = int64(f), true
		case "go_memstats_heap_idle_bytes":
			m.Idle = int64(f)
		case "go_memstats_heap_released_bytes":
			m.Released = int64(f)
		case "go_memstats_sys_bytes":
			m.Sys = int64(f)
		case "go_memstats_next_gc_bytes":
			m.NextGC = int64(f)
		case "go_gc_duration_seconds_count":
			m.GCs = int64(f)
		}
	}
	return m
}

// rssViolation says what is wrong with the after phase's RSS, or "".
func (r HostileReport) rssViolation() string {
	base, after := r.Mem[PhaseBaseline].RSS, r.Mem[PhaseAfter].RSS
	if r.Config.After <= 0 || base == 0 {
		return ""
	}
	if after == 0 {
		return "RSS after the attack: not sampled"
	}
	if b := rssReturnBound(base); after > b {
		return fmt.Sprintf("RSS %v after the attack is %s, above %s = max(2 × baseline %s, baseline + %s)",
			r.Config.After, mib(after), mib(b), mib(base), mib(RSSReturnSlack))
	}
	return ""
}

// printMem writes RSS at the end of each phase, the after phase's bound,
// and where the memory is by the Go runtime's account.
func (r HostileReport) printMem(w io.Writer) {
	if r.Config.After <= 0 {
		return
	}
	base := r.Mem[PhaseBaseline].RSS
	fmt.Fprintf(w, "RSS return      baseline %s, attack peak %s, %v after %s (lowest %s); bound %s\n",
		mib(base), mib(r.PeakRSS[PhaseAttack]), r.Config.After, mib(r.Mem[PhaseAfter].RSS), mib(r.AfterLow), mib(rssReturnBound(base)))
	fmt.Fprintln(w, "  memory at     RSS       heap in use  idle held  idle released  other (RSS − heap)  runtime sys  next GC at  GCs")
	for _, ph := range []string{PhaseBaseline, PhaseAttack, PhaseAfter} {
		m := r.Mem[ph]
		if !m.Scraped {
			fmt.Fprintf(w, "  %-12s %-9s (no /metrics)\n", ph+" end", mib(m.RSS))
			continue
		}
		fmt.Fprintf(w, "  %-12s %-9s %-12s %-10s %-14s %-19s %-12s %-11s %d\n", ph+" end", mib(m.RSS), mib(m.InUse), mib(m.Held()), mib(m.Released), mib(m.Other()), mib(m.Sys), mib(m.NextGC), m.GCs)
	}
}
