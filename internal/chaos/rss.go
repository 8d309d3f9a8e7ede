package chaos

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// GrowthSlope is the least-squares RSS slope, after the warm-up, at and
// above which a process counts as growing (when it also rises third after
// third, growing). 1 MiB/min is 1.4 GiB a day: a stage under the Helm
// chart's 512 MiB limit would be killed within hours, so a smaller leak is
// still worth a look but a larger one must fail the soak. It is also about
// ten times the slope a flat process's garbage-collection sawtooth (±3 MiB)
// can fake over a ten-minute soak sampled every 5 s (σ·√(12/(n·T²)) ≈
// 0.1 MiB/min); the thirds test keeps a short soak's noise and a warm-up
// that levels off from being called a leak.
const GrowthSlope = 1.0 // MiB per minute

// rssPoint is one sample of one process.
type rssPoint struct {
	At  time.Duration // since the sampler began
	PID int
	RSS int64 // bytes
}

// readRSS is VmRSS of pid from /proc/<pid>/status, in bytes.
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("chaos: rss: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "VmRSS:" {
			kib, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("chaos: rss of %d: %w", pid, err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("chaos: rss: /proc/%d/status has no VmRSS (a zombie?)", pid)
}

// slopeMiBPerMin is the least-squares slope of RSS over time, in MiB per
// minute; 0 with fewer than two points or no spread in time.
func slopeMiBPerMin(pts []rssPoint) float64 {
	if len(pts) < 2 {
		return 0
	}
	var sx, sy float64
	for _, p := range pts {
		sx += p.At.Minutes()
		sy += float64(p.RSS) / (1 << 20)
	}
	n := float64(len(pts))
	mx, my := sx/n, sy/n
	var sxy, sxx float64
	for _, p := range pts {
		dx := p.At.Minutes() - mx
		sxy += dx * (float64(p.RSS)/(1<<20) - my)
		sxx += dx * dx
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// growing reports whether pts (the samples after the warm-up) keep
// growing: a slope of at least GrowthSlope and each third's mean above the
// one before, so a process that grew and levelled off, or a sawtooth, is
// not flagged. Fewer than six points say nothing.
func growing(pts []rssPoint) bool {
	if len(pts) < 6 || slopeMiBPerMin(pts) < GrowthSlope {
		return false
	}
	k := len(pts) / 3
	a, b, c := meanRSS(pts[:k]), meanRSS(pts[k:len(pts)-k]), meanRSS(pts[len(pts)-k:])
	return a < b && b < c
}

func meanRSS(pts []rssPoint) float64 {
	var s float64
	for _, p := range pts {
		s += float64(p.RSS)
	}
	return s / float64(len(pts))
}

// lastRun is the points of pts's last process id: a restarted process's
// RSS starts afresh, so a slope across a restart means nothing.
func lastRun(pts []rssPoint) []rssPoint {
	i := len(pts)
	for i > 0 && pts[i-1].PID == pts[len(pts)-1].PID {
		i--
	}
	return pts[i:]
}

// since is the points at or after t.
func since(pts []rssPoint, t time.Duration) []rssPoint {
	for i, p := range pts {
		if p.At >= t {
			return pts[i:]
		}
	}
	return nil
}
