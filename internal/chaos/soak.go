package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/natsproc"
)

// soak waits for the load of a soak to end: no faults, the load alone,
// with a progress line every minute.
func soak(ctx context.Context, cfg Config, produced <-chan struct{}, logf func(string, ...any)) error {
	logf("soak: %d calls at %.0f/s for %v, no faults; RSS sampled every %v", cfg.Calls, cfg.Rate, cfg.Soak, cfg.RSSEvery)
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-produced:
			return nil
		case <-tick.C:
			logf("soak: %v of %v", time.Since(start).Round(time.Second), cfg.Soak)
		}
	}
}

// stageTargets are the stage processes as the RSS sampler reads them.
func stageTargets(procs []*proc) []rssTarget {
	out := make([]rssTarget, 0, len(procs))
	for _, p := range procs {
		out = append(out, rssTarget{name: p.name(), pid: p.pid, stage: true})
	}
	return out
}

// clusterRSSTargets are the cluster's nats-server nodes.
func clusterRSSTargets(c *natsproc.Cluster) []rssTarget {
	out := make([]rssTarget, 0, len(c.Nodes()))
	for _, n := range c.Nodes() {
		out = append(out, rssTarget{name: n.Name(), pid: n.PID})
	}
	return out
}

// concludeRSS takes the last RSS sample RSSAfter past the load's end and
// puts every process's figures in the report; in a soak, a stage process
// whose RSS kept growing is a violation. A soak calls it before the
// outcomes are checked and the dead letters replayed, so the release after
// the load is measured with nothing else running, and logs the figures at
// once: a check that fails to run does not lose them.
func concludeRSS(cfg Config, mem *rssSampler, rep *Report, logf func(string, ...any)) {
	logf("rss: last sample %v after the load", cfg.RSSAfter)
	mem.finish(cfg.RSSAfter)
	rep.Soak, rep.RSSEvery, rep.RSSWarmup = cfg.Soak, cfg.RSSEvery, cfg.RSSWarmup
	rep.RSS = mem.figures(cfg.RSSWarmup)
	if cfg.Soak <= 0 {
		return
	}
	var b strings.Builder
	rep.printRSS(&b)
	logf("%s", strings.TrimSuffix(b.String(), "\n"))
	for i, f := range rep.RSS {
		if f.Growing && mem.targets[i].stage {
			rep.RSSViolations = append(rep.RSSViolations, fmt.Sprintf("rss: %s kept growing under steady load: %+.2f MiB/min over %v (from %s to a peak of %s)",
				f.Process, f.Slope, f.SlopeOver.Round(time.Second), mib(f.Base), mib(f.Peak)))
		}
	}
}
