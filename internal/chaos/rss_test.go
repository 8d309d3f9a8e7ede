package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// series is n samples every step of one process: base MiB, rising by
// perMin MiB a minute, plus a sawtooth of amplitude saw MiB over four
// samples (what garbage collection does to a flat process).
func series(n int, step time.Duration, base, perMin, saw float64) []rssPoint {
	pts := make([]rssPoint, n)
	for i := range pts {
		at := time.Duration(i) * step
		mb := base + perMin*at.Minutes() + saw*float64(i%4-1)
		pts[i] = rssPoint{At: at, PID: 7, RSS: int64(mb * (1 << 20))}
	}
	return pts
}

func TestSlope_is_the_least_squares_rate_in_MiB_per_minute(t *testing.T) {
	if s := slopeMiBPerMin(series(120, 5*time.Second, 40, 2.5, 0)); s < 2.499 || s > 2.501 {
		t.Errorf("slope of a line rising 2.5 MiB/min: %v", s)
	}
	if s := slopeMiBPerMin(series(120, 5*time.Second, 40, 0, 4)); s < -0.1 || s > 0.1 {
		t.Errorf("slope of a flat ±4 MiB sawtooth over 10 min: %v, want about 0", s)
	}
	if s := slopeMiBPerMin(series(1, time.Second, 40, 5, 0)); s != 0 {
		t.Errorf("slope of one sample: %v, want 0", s)
	}
}

// A soak flags a process that keeps growing at GrowthSlope or more, and
// neither a flat sawtooth, a slow drift, a warm-up that levels off, nor too
// few samples.
func TestGrowing_flags_steady_growth_only(t *testing.T) {
	levelled := series(120, 5*time.Second, 60, 0, 3)
	for i := range 24 { // the first two minutes climb 20 MiB, then flat
		levelled[i].RSS = int64((40 + float64(i)*20/24) * (1 << 20))
	}
	cases := []struct {
		name string
		pts  []rssPoint
		want bool
	}{
		{"2 MiB/min with a ±3 MiB sawtooth, 10 min", series(120, 5*time.Second, 40, 2, 3), true},
		{"the issue's 0.7 MiB/s, 2 min", series(24, 5*time.Second, 64, 42, 3), true},
		{"flat with a ±4 MiB sawtooth", series(120, 5*time.Second, 40, 0, 4), false},
		{"0.5 MiB/min drift", series(120, 5*time.Second, 40, 0.5, 0), false},
		{"warm-up of 20 MiB, then flat", levelled, false},
		{"five samples", series(5, 5*time.Second, 40, 50, 0), false},
	}
	for _, c := range cases {
		if got := growing(c.pts); got != c.want {
			t.Errorf("%s: growing %v (slope %.2f MiB/min), want %v", c.name, got, slopeMiBPerMin(c.pts), c.want)
		}
	}
}

// The figures of a process killed once: the peak counts both lives, the
// slope and the growth flag only the last one, from the warm-up to the
// load's end; the after figure is the last sample.
func TestRSSFigure_of_a_restarted_process(t *testing.T) {
	mb := func(n float64) int64 { return int64(n * (1 << 20)) }
	var pts []rssPoint
	for i := range 40 { // 0..195 s every 5 s
		at := time.Duration(i) * 5 * time.Second
		p := rssPoint{At: at, PID: 1, RSS: mb(30 + float64(i))} // growing 12 MiB/min
		if i >= 20 {
			p.PID, p.RSS = 2, mb(20)
		}
		pts = append(pts, p)
	}
	f := rssFigure("execute-0", pts, 10*time.Second, 20*time.Second, 150*time.Second)
	if f.PIDs != 2 || f.Samples != 40 {
		t.Errorf("pids %d, samples %d; want 2, 40", f.PIDs, f.Samples)
	}
	if f.Base != mb(34) || f.Peak != mb(49) || f.After != mb(20) || f.AfterAt != 45*time.Second {
		t.Errorf("base %s peak %s after %s at %v; want 34, 49, 20 MiB at 45s", mib(f.Base), mib(f.Peak), mib(f.After), f.AfterAt)
	}
	if f.Slope != 0 || f.Growing || f.SlopeOver != 50*time.Second {
		t.Errorf("slope %v over %v, growing %v: want the flat last life, 100..150 s", f.Slope, f.SlopeOver, f.Growing)
	}
}

const rssChildEnv = "TOOLGATE_CHAOS_RSS_CHILD"

// rssChild holds mib MiB, every page touched, until it is killed (two
// minutes at most).
func rssChild(mib string) {
	n, _ := strconv.Atoi(mib)
	hold := make([]byte, n<<20)
	for i := 0; i < len(hold); i += 4096 {
		hold[i] = 1
	}
	time.Sleep(2 * time.Minute)
	fmt.Println(len(hold))
}

// The sampler reads a real process's VmRSS by its current pid through a
// kill and the supervisor's restart: a child holding 64 MiB shows at least
// that and 32 MiB more than one holding 1 MiB, and the killed child's
// figures count two process ids. Not 48 MiB more: how much of the test
// binary itself (some 25 MiB) is resident differs between the two children
// (a loaded machine saw 74 MiB against 26 MiB, 47.7 MiB apart).
func TestRSSSampler_reads_real_processes_through_a_restart(t *testing.T) {
	dir := t.TempDir()
	child := func(name string, mib int) *proc {
		p := &proc{stage: name, bin: os.Args[0], log: filepath.Join(dir, name+".log"), env: []string{rssChildEnv + "=" + strconv.Itoa(mib)}}
		if err := p.start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.stop(5 * time.Second) })
		return p
	}
	big, small := child("big", 64), child("small", 1)
	holds := func(p *proc) { // the pages are touched once the test binary has started
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if rss, err := readRSS(p.pid()); err == nil && rss >= 64<<20 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never held 64 MiB", p.stage)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	holds(big)
	mem := startRSS(100*time.Millisecond, stageTargets([]*proc{big, small}))
	mem.markLoadStart()
	time.Sleep(500 * time.Millisecond)
	first := big.pid()
	if !big.kill() {
		t.Fatal("the big child was not running")
	}
	deadline := time.Now().Add(10 * time.Second)
	for big.pid() == 0 || big.pid() == first {
		if time.Now().After(deadline) {
			t.Fatal("the big child was not restarted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	holds(big)
	mem.markLoadEnd()
	mem.finish(200 * time.Millisecond)
	figs := mem.figures(200 * time.Millisecond)
	if len(figs) != 2 || figs[0].Process != "big" || figs[1].Process != "small" {
		t.Fatalf("figures %+v", figs)
	}
	b, s := figs[0], figs[1]
	t.Logf("big: %+v\nsmall: %+v", b, s)
	if b.Base < 64<<20 || b.Peak < 64<<20 || b.After < 64<<20 || b.Base-s.Base < 32<<20 {
		t.Errorf("big child holding 64 MiB: baseline %s, peak %s, after %s", mib(b.Base), mib(b.Peak), mib(b.After))
	}
	if s.Peak <= 0 || s.Samples < 5 {
		t.Errorf("small child holding 1 MiB: peak %s in %d samples", mib(s.Peak), s.Samples)
	}
	if b.PIDs != 2 || s.PIDs != 1 {
		t.Errorf("process ids sampled: big %d (killed once), small %d; want 2, 1", b.PIDs, s.PIDs)
	}
	if b.AfterAt < 200*time.Millisecond {
		t.Errorf("last sample %v after the load, want at least 200ms", b.AfterAt)
	}
}
