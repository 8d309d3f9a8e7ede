package chaos

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestRSSReturnBound_is_twice_the_baseline_or_64_MiB_above_it(t *testing.T) {
	for _, c := range []struct{ base, want int64 }{
		{32 << 20, 96 << 20},   // small: the additive floor
		{64 << 20, 128 << 20},  // both the same
		{200 << 20, 400 << 20}, // large: the doubling
	} {
		if got := rssReturnBound(c.base); got != c.want {
			t.Errorf("bound of %s: %s, want %s", mib(c.base), mib(got), mib(c.want))
		}
	}
}

func memReport(after time.Duration, base, peak, end int64) HostileReport {
	return HostileReport{
		Config:  HostileConfig{After: after},
		PeakRSS: map[string]int64{PhaseBaseline: base, PhaseAttack: peak},
		Mem: map[string]MemFigures{
			PhaseBaseline: {RSS: base}, PhaseAttack: {RSS: peak}, PhaseAfter: {RSS: end},
		},
	}
}

// The figures (64 MiB baseline, 967 peak, 892 after) fail; a
// return to 100 MiB passes; a run with no after phase is not judged on it.
func TestHostileReport_fails_when_RSS_does_not_come_back(t *testing.T) {
	bad := memReport(time.Minute, 64<<20, 967<<20, 892<<20)
	if bad.OK() || !strings.Contains(strings.Join(bad.Violations(), "\n"), "892 MiB, above 128 MiB") {
		t.Errorf("892 MiB after a 64 MiB baseline: violations %q", bad.Violations())
	}
	var out strings.Builder
	bad.Print(&out)
	if !strings.Contains(out.String(), "baseline 64 MiB, attack peak 967 MiB, 1m0s after 892 MiB") || !strings.Contains(out.String(), "FAIL") {
		t.Errorf("report:\n%s", out.String())
	}
	if good := memReport(time.Minute, 64<<20, 967<<20, 100<<20); !good.OK() {
		t.Errorf("100 MiB after a 64 MiB baseline: violations %q", good.Violations())
	}
	if edge := memReport(time.Minute, 64<<20, 967<<20, 128<<20); !edge.OK() {
		t.Errorf("128 MiB, the bound itself: violations %q", edge.Violations())
	}
	if unsampled := memReport(time.Minute, 64<<20, 967<<20, 0); unsampled.OK() {
		t.Error("no RSS read after the attack passed")
	}
	if none := memReport(-1, 64<<20, 967<<20, 0); !none.OK() {
		t.Errorf("no after phase: violations %q", none.Violations())
	}
}

func TestMemFigures_reads_the_Go_heap_from_metrics(t *testing.T) {
	text := "# HELP go_memstats_heap_inuse_bytes x\ngo_memstats_heap_inuse_bytes 1.048576e+08\n" +
		"go_memstats_heap_idle_bytes 7.34003200e+08\ngo_memstats_heap_released_bytes 1.048576e+07\n" +
		"go_memstats_sys_bytes 9.4371840e+08\ngo_memstats_next_gc_bytes 2.097152e+08\ngo_gc_duration_seconds_count 42\n"
	m := memFigures(900<<20, text)
	if !m.Scraped || m.InUse != 100<<20 || m.Held() != 690<<20 || m.Released != 10<<20 || m.Other() != 110<<20 || m.Sys != 900<<20 || m.NextGC != 200<<20 || m.GCs != 42 {
		t.Errorf("%+v held %d other %d", m, m.Held(), m.Other())
	}
	if memFigures(1, "").Scraped {
		t.Error("no metrics read as scraped")
	}
}

// TestExpect_an_input_refused_at_publish_is_settled: a huge event that
// TOOLGATE_IN refused for its size has its outcome already, the error its
// producer got; one that was stored waits for a result.
func TestExpect_an_input_refused_at_publish_is_settled(t *testing.T) {
	none := &resultSet{}
	if !(expect{rid: "r-0", refused: "message size exceeds maximum allowed"}).settled(none) {
		t.Error("an input refused at publish is not settled")
	}
	if (expect{rid: "r-1"}).settled(none) {
		t.Error("a stored input with no result is settled")
	}
}

// TestChild_endPhase_keeps_later_samples_out_of_the_phase: the after
// phase's RSS is the sample beside its /metrics, not one taken while the
// harness goes on to read results and dead letters.
func TestChild_endPhase_keeps_later_samples_out_of_the_phase(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "go_memstats_heap_inuse_bytes 1")
	}))
	defer srv.Close()
	c := &child{p: &proc{http: strings.TrimPrefix(srv.URL, "http://")}, peak: map[string]int64{}, low: map[string]int64{}, last: map[string]int64{}, cpu: map[string]time.Duration{}}
	c.setPhase(PhaseAfter)
	c.sample(os.Getpid())
	at := c.last[PhaseAfter]
	if m := c.endPhase(); !strings.Contains(m, "go_memstats_heap_inuse_bytes") || at == 0 {
		t.Fatalf("metrics %q, RSS %d", m, at)
	}
	// Judging loads what the soak left: RSS grows, the after phase's
	// figure must not.
	grow := make([]byte, 64<<20)
	for i := 0; i < len(grow); i += 4096 {
		grow[i] = 1
	}
	c.sample(os.Getpid())
	runtime.KeepAlive(grow)
	if got := c.last[PhaseAfter]; got != at {
		t.Fatalf("after phase's RSS %s, want %s, the sample at its end", mib(got), mib(at))
	}
}
