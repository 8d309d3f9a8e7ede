package chaos

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// HostileReport is what a soak saw.
type HostileReport struct {
	Config  HostileConfig
	Cap     string
	Crashes []Crash
	PeakRSS map[string]int64 // phase -> max VmRSS of the child
	PeakHWM int64            // max VmHWM over every incarnation
	// Mem is the child's memory at the end of each phase (the attack's
	// after the settle); AfterLow the lowest RSS of the after phase.
	Mem      map[string]MemFigures
	AfterLow int64
	CPU      map[string]time.Duration // phase -> the child's CPU time (the attack phase includes the settle)
	Valid    map[string]ValidFigures
	Inputs   []InputOutcome
	Metrics  string // the child's /metrics at the end
	Settle   time.Duration
	Total    time.Duration
}

func (r HostileReport) lostValid() int {
	n := 0
	for _, f := range r.Valid {
		n += f.Lost + f.Refused
	}
	return n
}

// Violations lists what must not happen: a crash, a valid call lost,
// doubled or not executed, a hostile input with no recorded outcome or with
// a defect seen.
func (r HostileReport) Violations() []string {
	var v []string
	if len(r.Crashes) > 0 {
		v = append(v, fmt.Sprintf("%d crashes of toolgate up", len(r.Crashes)))
	}
	for _, ph := range []string{PhaseBaseline, PhaseAttack, PhaseAfter} {
		f := r.Valid[ph]
		if f.Lost+f.Refused+f.Duplicates+f.Wrong > 0 {
			v = append(v, fmt.Sprintf("%s: valid calls lost %d, never accepted %d, with more than one result %d, not executed %d", ph, f.Lost, f.Refused, f.Duplicates, f.Wrong))
		}
	}
	if s := r.rssViolation(); s != "" {
		v = append(v, s)
	}
	for _, in := range r.Inputs {
		if !in.Recorded {
			v = append(v, in.Name+": no recorded outcome")
		}
		for _, d := range in.Defects {
			v = append(v, in.Name+": "+d)
		}
	}
	return v
}

// OK reports whether no violation was found.
func (r HostileReport) OK() bool { return len(r.Violations()) == 0 }

// Print writes the figures as a table, then every violation.
func (r HostileReport) Print(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "hostile soak    toolgate up under %s; valid load %.0f/s for %v per phase; %d hostile inputs; settle %v; total %v\n",
		r.Cap, c.Rate, c.Duration, len(r.Inputs), r.Settle.Round(100*time.Millisecond), r.Total.Round(100*time.Millisecond))
	fmt.Fprintf(w, "crashes         %d\n", len(r.Crashes))
	for _, k := range r.Crashes {
		fmt.Fprintf(w, "  at %6.1fs pid %d (%s, after %s): %s; %s\n", k.At.Seconds(), k.PID, k.Phase, orNone(k.After), k.State, orNone(k.Cause))
	}
	fmt.Fprintf(w, "peak RSS        baseline %s, attack %s (VmHWM %s)\n", mib(r.PeakRSS[PhaseBaseline]), mib(r.PeakRSS[PhaseAttack]), mib(r.PeakHWM))
	r.printMem(w)
	fmt.Fprintf(w, "CPU             baseline %.1f s, attack and settle %.1f s (toolgate up, user+system)\n", r.CPU[PhaseBaseline].Seconds(), r.CPU[PhaseAttack].Seconds())
	fmt.Fprintf(w, "valid calls     %-9s %7s %8s %7s %4s %7s %5s %5s %9s %9s\n", "phase", "offered", "accepted", "results", "lost", "refused", "dupes", "wrong", "p50", "p99")
	for _, ph := range []string{PhaseBaseline, PhaseAttack, PhaseAfter} {
		f, ok := r.Valid[ph]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "                %-9s %7d %8d %7d %4d %7d %5d %5d %9s %9s\n", ph, f.Offered, f.Accepted, f.Results, f.Lost, f.Refused, f.Duplicates, f.Wrong, ms(f.P50), ms(f.P99))
	}
	fmt.Fprintln(w, "hostile inputs  (published at; what; → recorded outcome; dead letters)")
	for _, in := range r.Inputs {
		mark := "ok "
		if !in.Recorded || len(in.Defects) > 0 {
			mark = "BAD"
		}
		fmt.Fprintf(w, "  %s %-22s %5.1fs %s\n", mark, in.Name, in.PublishedAt.Seconds(), in.What)
		if in.Note != "" {
			fmt.Fprintf(w, "      note: %s\n", in.Note)
		}
		fmt.Fprintf(w, "      → %s; %d dead letters\n", orNone(in.Outcome), in.Letters)
		for _, d := range in.Defects {
			fmt.Fprintf(w, "      ! %s\n", d)
		}
	}
	if m := guardMetrics(r.Metrics); len(m) > 0 {
		fmt.Fprintln(w, "metrics         (counters of refused, malformed, cut or recovered input at the end)")
		for _, l := range m {
			fmt.Fprintln(w, "  "+l)
		}
	}
	for _, v := range r.Violations() {
		fmt.Fprintln(w, "VIOLATION       "+v)
	}
	if r.OK() {
		back := ""
		if c.After > 0 {
			back = fmt.Sprintf(", RSS %v after under %s", c.After, mib(rssReturnBound(r.Mem[PhaseBaseline].RSS)))
		}
		fmt.Fprintln(w, "verdict         PASS: no crash, every valid call executed once, every hostile input ended in a recorded outcome"+back)
	} else {
		fmt.Fprintln(w, "verdict         FAIL")
	}
}

var guardMetric = regexp.MustCompile(`^(toolgate|llm)_.*(malformed|skipped|refused|too_large|recover|panic|out_of_range|oversize|dropped|cut|invalid_utf8|hostile|bound|limit)`)

// guardMetrics are the non-zero samples of metrics whose names say they
// count refused or malformed input (at most 30).
func guardMetrics(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "#") || strings.HasSuffix(l, " 0") {
			continue
		}
		name := l
		if i := strings.IndexAny(l, "{ "); i > 0 {
			name = l[:i]
		}
		if guardMetric.MatchString(name) && len(out) < 30 {
			out = append(out, l)
		}
	}
	return out
}

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
