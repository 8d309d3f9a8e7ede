package chaos

import (
	"sync"
	"time"
)

// rssTarget is a process the sampler reads: pid is its current process id,
// 0 while it is not running (between a kill and its restart).
type rssTarget struct {
	name  string
	pid   func() int
	stage bool // a toolgate stage process (a nats-server node is not)
}

// RSSFigure is what the sampler saw of one process over a run.
type RSSFigure struct {
	Process string
	PIDs    int   // distinct process ids sampled: 1 unless it was killed and restarted
	Samples int   // samples taken
	Base    int64 // VmRSS at the first sample after the warm-up (bytes)
	Peak    int64 // the highest VmRSS from the load's start to its end
	After   int64 // VmRSS at the last sample, AfterAt past the load's end
	AfterAt time.Duration
	// Slope is the least-squares slope of VmRSS from the warm-up to the
	// load's end, over the samples of the last process id, in MiB/min;
	// SlopeOver is the time those samples span.
	Slope     float64
	SlopeOver time.Duration
	Growing   bool // growing(those samples)
}

// rssSampler reads VmRSS of every target every interval, from start until
// finish; the run marks when the load began and ended.
type rssSampler struct {
	every   time.Duration
	targets []rssTarget
	begin   time.Time

	mu        sync.Mutex
	pts       map[string][]rssPoint
	loadStart time.Duration
	loadEnd   time.Duration // 0 until markLoadEnd
	stop      chan struct{}
	done      chan struct{}
}

func startRSS(every time.Duration, targets []rssTarget) *rssSampler {
	s := &rssSampler{every: every, targets: targets, begin: time.Now(), pts: map[string][]rssPoint{},
		stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *rssSampler) sample() {
	at := time.Since(s.begin)
	for _, t := range s.targets {
		pid := t.pid()
		if pid <= 0 {
			continue
		}
		rss, err := readRSS(pid)
		if err != nil {
			continue // gone between the two reads
		}
		s.mu.Lock()
		s.pts[t.name] = append(s.pts[t.name], rssPoint{At: at, PID: pid, RSS: rss})
		s.mu.Unlock()
	}
}

// markLoadStart and markLoadEnd take a sample and note the time.
func (s *rssSampler) markLoadStart() {
	s.sample()
	s.mu.Lock()
	s.loadStart = time.Since(s.begin)
	s.mu.Unlock()
}

func (s *rssSampler) markLoadEnd() {
	s.mu.Lock()
	s.loadEnd = time.Since(s.begin)
	s.mu.Unlock()
	s.sample()
}

// finish waits until after has passed since the load's end, takes the last
// sample and stops.
func (s *rssSampler) finish(after time.Duration) {
	s.mu.Lock()
	end := s.loadEnd
	s.mu.Unlock()
	if d := end + after - time.Since(s.begin); d > 0 {
		time.Sleep(d) // the release is measured at a fixed time after the load
	}
	close(s.stop)
	<-s.done
	s.sample()
}

// figures computes each target's figures, with the baseline taken warmup
// after the load's start.
func (s *rssSampler) figures(warmup time.Duration) []RSSFigure {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []RSSFigure
	for _, t := range s.targets {
		out = append(out, rssFigure(t.name, s.pts[t.name], s.loadStart, s.loadStart+warmup, s.loadEnd))
	}
	return out
}

// rssFigure is one process's figures from its samples: the load ran from
// start to end, the warm-up ended at warm.
func rssFigure(name string, pts []rssPoint, start, warm, end time.Duration) RSSFigure {
	f := RSSFigure{Process: name, Samples: len(pts)}
	if len(pts) == 0 {
		return f
	}
	pids := map[int]bool{}
	for _, p := range pts {
		pids[p.PID] = true
		if p.At >= start && p.At <= end {
			f.Peak = max(f.Peak, p.RSS)
		}
	}
	f.PIDs = len(pids)
	var load []rssPoint // from the warm-up to the load's end
	for _, p := range since(pts, warm) {
		if p.At > end {
			break
		}
		load = append(load, p)
	}
	if len(load) > 0 {
		f.Base = load[0].RSS
	} else if w := since(pts, start); len(w) > 0 { // a load shorter than the warm-up
		f.Base = w[0].RSS
	}
	last := pts[len(pts)-1]
	f.After, f.AfterAt = last.RSS, last.At-end
	if run := lastRun(load); len(run) > 0 {
		f.Slope, f.SlopeOver, f.Growing = slopeMiBPerMin(run), run[len(run)-1].At-run[0].At, growing(run)
	}
	return f
}
