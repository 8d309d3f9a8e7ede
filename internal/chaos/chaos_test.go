package chaos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The short chaos run: ~300 calls over ~12 s through seven stage processes,
// with a stage SIGKILLed every ~2 s (execute first, while the tool holds a
// call), NATS restarted once and redis-server
// SIGKILLed and restarted once. Every accepted call has exactly one result,
// none is lost, none reaches the executor twice, every failed call left one
// dead letter, and replaying every dead letter runs nothing twice.
func TestRun_kills_and_restarts_lose_and_double_no_call(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	rep, err := Run(context.Background(), Config{
		Bins:  testBins(t),
		Calls: 300, Rate: 25, KillEvery: 2 * time.Second, AckWait: 3 * time.Second,
		Settle: 2 * time.Minute, ReplayWait: time.Minute, Dir: dir, Log: &log,
		RSSEvery: time.Second, RSSAfter: 2 * time.Second,
	})
	var out strings.Builder
	rep.Print(&out)
	t.Logf("\n%s\n%s", log.String(), out.String())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		dumpLogs(t, dir)
		t.Fatalf("chaos run found %d violations (see the figures above)", len(rep.Violations)+len(rep.Replay.Violations))
	}
	if rep.KillCount() < 3 || rep.NATSRestarts != 1 || rep.RedisRestart != 1 {
		t.Fatalf("%d kills, %d NATS and %d redis restarts: the run did not do the damage it promised", rep.KillCount(), rep.NATSRestarts, rep.RedisRestart)
	}
	if rep.Kills["execute"] == 0 || rep.Reconciled == 0 || rep.StatusQueries == 0 {
		t.Fatalf("execute killed %d times, %d calls reconciled by %d status queries: the killed execute process's claim was not reconciled", rep.Kills["execute"], rep.Reconciled, rep.StatusQueries)
	}
	if rep.Accepted < 290 || rep.Executed == 0 || sum(rep.DeadLettered) == 0 {
		t.Fatalf("accepted %d, executed %d, dead-lettered %d: the mix did not flow", rep.Accepted, rep.Executed, sum(rep.DeadLettered))
	}
	checkRSS(t, rep, 7)
}

// checkRSS asserts that the run sampled every one of its n stage processes
// (and what else it names) under load and after it.
func checkRSS(t *testing.T, rep Report, n int) {
	t.Helper()
	stages := 0
	for _, f := range rep.RSS {
		if !strings.HasPrefix(f.Process, "nats-") {
			stages++
		}
		if f.Samples < 3 || f.Base <= 0 || f.Peak < f.Base || f.After <= 0 || f.AfterAt < 2*time.Second {
			t.Errorf("rss of %s: %+v; want a baseline, a peak at least that, and a sample 2s after the load", f.Process, f)
		}
	}
	if stages != n {
		t.Errorf("rss figures of %d stage processes, want %d", stages, n)
	}
}

// dumpLogs prints the tail of each stage's log when a run failed.
func dumpLogs(t *testing.T, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		t.Logf("--- %s (tail)\n%s", filepath.Base(f), b)
	}
}
