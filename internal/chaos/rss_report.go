package chaos

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// printRSS writes every sampled process's RSS: baseline after the warm-up,
// peak under load, the last sample after the load, and the slope.
func (r Report) printRSS(w io.Writer) {
	if len(r.RSS) == 0 {
		return
	}
	what := "chaos run: killed processes restart afresh, so no slope is judged (--soak does)"
	if r.Soak > 0 {
		what = fmt.Sprintf("soak of %v, no faults; growing = slope ≥ %.1f MiB/min and each third of the samples above the one before", r.Soak, GrowthSlope)
	}
	fmt.Fprintf(w, "rss             every %v, baseline %v into the load; %s\n", r.RSSEvery, r.RSSWarmup, what)
	for _, f := range r.RSS {
		slope := ""
		if r.Soak > 0 {
			slope = fmt.Sprintf("  slope %+6.2f MiB/min over %v", f.Slope, f.SlopeOver.Round(time.Second))
			if f.Growing {
				slope += "  GROWING"
			}
		}
		fmt.Fprintf(w, "  %-14s baseline %7s  peak %7s  after %7s (%v past the load)  %d pid(s), %d samples%s\n",
			f.Process, mib(f.Base), mib(f.Peak), mib(f.After), f.AfterAt.Round(time.Second), f.PIDs, f.Samples, slope)
	}
}

// printExecDown writes how the calls fared while the executor was down.
func (r Report) printExecDown(w io.Writer) {
	e := r.ExecDown
	if e == nil {
		return
	}
	first := "none"
	if e.FirstRun >= 0 {
		first = e.FirstRun.Round(10 * time.Millisecond).String()
	}
	fmt.Fprintf(w, "executor down   %v (execute's retry budget %v): %d calls waited for it, p50 %v, max %v; first executed call %s after it came back; %d dead-lettered by execute for want of an executor (replayed, not lost)\n",
		e.Down.Round(time.Millisecond), e.Budget, e.Waited, e.WaitP50.Round(10*time.Millisecond), e.WaitMax.Round(10*time.Millisecond), first, e.Exhausted)
	if e.CircuitOpened >= 0 {
		fmt.Fprintf(w, "                circuit breaker: open %v after the executor stopped (groups %s)\n", e.CircuitOpened.Round(10*time.Millisecond), strings.Join(e.Circuits, ", "))
	} else {
		fmt.Fprintf(w, "                circuit breaker: no executor group's circuit seen open while it was down\n")
	}
}
