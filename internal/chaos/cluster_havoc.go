package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/natsproc"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// The kinds of fault of the cluster topology.
const (
	FaultKillStage    = "kill-stage"           // SIGKILL of one stage replica
	FaultKillLeader   = "kill-stream-leader"   // SIGKILL of the gates stream leader's NATS node, restarted once a new leader is elected
	FaultKillPrimary  = "kill-redis-primary"   // SIGKILL of the Redis primary, restarted (as a replica) once Sentinel promoted the other
	FaultPauseNATS    = "pause-nats"           // SIGSTOP of a NATS node (the gates stream leader) for a few seconds, then SIGCONT
	FaultBacklogStage = "restart-with-backlog" // every replica of a stage held down until its consumer has a backlog, then started
)

// Fault is one fault of a run and how the deployment came back from it.
type Fault struct {
	Kind, Target string
	At           time.Duration // since the load began
	// Recovered is the time to a new stream leader (kill-stream-leader,
	// pause-nats) or to a promoted primary (kill-redis-primary); 0 when the
	// kind has none.
	Recovered time.Duration
	// FirstRun is the time from the fault to the first execution request
	// the executor received after it; -1 when none came.
	FirstRun time.Duration
	Note     string
	when     time.Time
}

// clusterHavoc injects the faults of the cluster topology while the load
// runs: a stage replica SIGKILLed every KillEvery (drawn from a shuffled bag
// so every replica of every stage is killed in each round, and the first
// round is finished after the load if need be), and once each, at fixed
// fractions of the load, the stream leader's node killed, the Redis primary
// killed, a NATS node paused and a stage restarted onto a backlog.
type clusterHavoc struct {
	cfg   Config
	procs []*proc
	exe   *Executor
	nats  *natsproc.Cluster
	redis *sentinelSet
	js    jetstream.JetStream
	rep   *Report
	logf  func(string, ...any)
	start time.Time
	acc   *accepted
	// faulted is closed once every cluster fault is done: the producer
	// holds the last tenth of the calls until then.
	faulted chan struct{}

	mu   sync.Mutex
	last time.Time // when the last cluster fault (not a stage kill) began
}

func (h *clusterHavoc) record(f Fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f.At, f.FirstRun = f.when.Sub(h.start), -1
	h.rep.Faults = append(h.rep.Faults, f)
	if f.Kind != FaultKillStage {
		h.last = f.when
	}
	switch f.Kind {
	case FaultKillStage:
		h.rep.Kills[f.Target]++
	case FaultKillLeader: // the node is restarted
		h.rep.NATSRestarts++
	case FaultKillPrimary: // the old primary is restarted as a replica
		h.rep.RedisRestart++
	}
}

// timeFirstRuns fills each fault's FirstRun from the executor's record.
func (h *clusterHavoc) timeFirstRuns() {
	for i := range h.rep.Faults {
		f := &h.rep.Faults[i]
		if t, ok := h.exe.FirstRunAfter(f.when); ok {
			f.FirstRun = t.Sub(f.when)
		}
	}
}

// run returns once the load has ended, every cluster fault has been
// carried out and every stage replica has been killed once.
func (h *clusterHavoc) run(ctx context.Context, produced <-chan struct{}) error {
	rng := rand.New(rand.NewPCG(h.cfg.Seed, h.cfg.Seed>>1|1))
	faults := make(chan error, 1)
	go func() {
		err := h.clusterFaults(ctx, rng.Uint64())
		close(h.faulted)
		faults <- err
	}()

	bag := rng.Perm(len(h.procs))
	for i, j := range bag { // the first kill is of an execute replica, mid-call
		if h.procs[j].stage == streams.Execute {
			bag[0], bag[i] = bag[i], bag[0]
			break
		}
	}
	first := true // the first round is not over
	missed := map[int]int{}
	const maxMissed = 20 // draws of a process found not running, in the first round
	loadOver, faultsOver := false, false
	var faultErr error
	nextKill := time.Now().Add(h.cfg.KillEvery)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if loadOver && faultsOver && !first {
			return faultErr
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-produced:
			produced, loadOver = nil, true
			nextKill = time.Now() // finish the first round at once
		case faultErr = <-faults:
			faults, faultsOver = nil, true
			if faultErr != nil {
				return faultErr
			}
		case now := <-tick.C:
			if now.Before(nextKill) || (loadOver && !first) {
				continue
			}
			if len(bag) == 0 {
				bag, first = rng.Perm(len(h.procs)), false
				if loadOver {
					continue
				}
			}
			pi := bag[0]
			p := h.procs[pi]
			bag = bag[1:]
			if p.stage == streams.Execute {
				// Catch it mid-call: the tool has the request, toolgate
				// will never hear the answer.
				_ = testenv.Poll(time.Second, 5*time.Millisecond, func() error {
					if h.exe.InFlight() == 0 {
						return errors.New("no call in flight")
					}
					return nil
				})
			}
			t0 := time.Now()
			if p.kill() {
				h.record(Fault{Kind: FaultKillStage, Target: p.stage, when: t0, Note: p.log})
				h.logf("SIGKILL %s (%s)", p.stage, p.log)
			} else if first && missed[pi] < maxMissed {
				// Not running (held down for the backlog fault, or being
				// restarted): drawn again later in the first round, so every
				// stage is still killed at least once. A loaded run drew
				// validate while it was held, and never killed it.
				missed[pi]++
				bag = append(bag, pi)
			}
			every := h.cfg.KillEvery
			if loadOver {
				every = 300 * time.Millisecond
			}
			jitter := time.Duration(rng.Int64N(int64(every)/2)) - every/4
			nextKill = now.Add(every + jitter)
		}
	}
}

// clusterFaults carries out the cluster faults in turn once 10, 25, 40,
// 55 and 70 % of the calls are accepted (a failover slows the load and the
// producer catches up in a burst, so a schedule by the clock would run the
// last faults after it), the short ones first, each once the one before
// has recovered. The producer holds the last tenth of the calls until they
// are done.
func (h *clusterHavoc) clusterFaults(ctx context.Context, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	steps := []struct {
		at float64
		do func(context.Context, *rand.Rand) error
	}{{0.1, h.pauseNode}, {0.25, h.backlogRestart}, {0.4, h.killLeader}, {0.55, h.killPrimary}}
	if h.cfg.ExecutorDown > 0 {
		steps = append(steps, struct {
			at float64
			do func(context.Context, *rand.Rand) error
		}{0.7, h.executorDown})
	}
	for _, s := range steps {
		want := int(s.at * float64(h.cfg.Calls))
		tick := time.NewTicker(20 * time.Millisecond)
		for h.acc.count() < want {
			select {
			case <-tick.C:
			case <-ctx.Done():
				tick.Stop()
				return ctx.Err()
			}
		}
		tick.Stop()
		if err := s.do(ctx, rng); err != nil {
			return err
		}
	}
	return nil
}

// count is how many responses were accepted so far.
func (a *accepted) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.kind)
}

// newLeader waits up to total until stream has a leader other than old
// and returns it.
func (h *clusterHavoc) newLeader(ctx context.Context, stream, old string, total time.Duration) (string, error) {
	var leader string
	err := testenv.Poll(total, 50*time.Millisecond, func() error {
		l, err := natsproc.StreamLeader(ctx, h.js, stream)
		if err != nil {
			return err
		}
		if l == "" || l == old {
			return fmt.Errorf("chaos: stream %s has no leader other than %q yet", stream, old)
		}
		leader = l
		return nil
	})
	return leader, err
}

// gatesLeader is the node leading the gates stream now.
func (h *clusterHavoc) gatesLeader(ctx context.Context) (int, string, error) {
	var name string
	err := testenv.Poll(time.Minute, 100*time.Millisecond, func() error {
		l, err := natsproc.StreamLeader(ctx, h.js, streams.StreamGates)
		if err == nil && l == "" {
			err = errors.New("chaos: no leader")
		}
		name = l
		return err
	})
	if err != nil {
		return -1, "", err
	}
	i := h.nats.Index(name)
	if i < 0 {
		return -1, "", fmt.Errorf("chaos: stream leader %q is no node of the cluster", name)
	}
	return i, name, nil
}

func (h *clusterHavoc) killLeader(ctx context.Context, _ *rand.Rand) error {
	i, name, err := h.gatesLeader(ctx)
	if err != nil {
		return err
	}
	t0 := time.Now()
	h.nats.Kill(i)
	h.logf("SIGKILL %s, leader of %s", name, streams.StreamGates)
	leader, err := h.newLeader(ctx, streams.StreamGates, name, 2*time.Minute)
	if err != nil {
		return err
	}
	rec := time.Since(t0)
	h.logf("%s leads %s after %v; restarting %s", leader, streams.StreamGates, rec.Round(time.Millisecond), name)
	if err := h.nats.Start(i); err != nil {
		return err
	}
	h.record(Fault{Kind: FaultKillLeader, Target: name, when: t0, Recovered: rec, Note: "new leader " + leader})
	return nil
}

func (h *clusterHavoc) killPrimary(ctx context.Context, _ *rand.Rand) error {
	old, err := h.redis.primary(ctx)
	if err != nil {
		return err
	}
	n := h.redis.node(old)
	if n == nil {
		return fmt.Errorf("chaos: the sentinels name %s, no node of the set", old)
	}
	t0 := time.Now()
	n.kill()
	h.logf("SIGKILL redis primary %s", old)
	var now string
	err = testenv.Poll(2*time.Minute, 50*time.Millisecond, func() error {
		p, err := h.redis.primary(ctx)
		if err != nil {
			return err
		}
		if p == old {
			return errors.New("chaos: not promoted yet")
		}
		now = p
		return nil
	})
	if err != nil {
		return err
	}
	rec := time.Since(t0)
	h.logf("sentinel promoted %s after %v; restarting %s as its replica", now, rec.Round(time.Millisecond), old)
	if err := h.redis.restartAsReplica(n); err != nil {
		return err
	}
	go func() { // Sentinel turns it into a replica within seconds; the run goes on meanwhile
		if err := waitReplicaLink(old, time.Minute); err != nil {
			h.logf("warning: %v", err)
			return
		}
		h.logf("%s is in sync as a replica of %s", old, now)
	}()
	h.record(Fault{Kind: FaultKillPrimary, Target: old, when: t0, Recovered: rec, Note: "promoted " + now})
	return nil
}

func (h *clusterHavoc) pauseNode(ctx context.Context, _ *rand.Rand) error {
	i, name, err := h.gatesLeader(ctx)
	if err != nil {
		return err
	}
	const pause = 4 * time.Second
	t0 := time.Now()
	h.nats.Pause(i)
	h.logf("SIGSTOP %s, leader of %s, for %v", name, streams.StreamGates, pause)
	pctx, cancel := context.WithTimeout(ctx, pause)
	leader, lerr := h.newLeader(pctx, streams.StreamGates, name, pause)
	cancel()
	var rec time.Duration
	if lerr == nil {
		rec = time.Since(t0)
	}
	if d := time.Until(t0.Add(pause)); d > 0 {
		time.Sleep(d) // the partition's length, not a wait for a condition
	}
	h.nats.Resume(i)
	note := fmt.Sprintf("paused %v, new leader %s", pause, leader)
	if lerr != nil {
		note = fmt.Sprintf("paused %v, no other leader elected during the pause", pause)
	}
	h.logf("SIGCONT %s; %s", name, note)
	h.record(Fault{Kind: FaultPauseNATS, Target: name, when: t0, Recovered: rec, Note: note})
	return nil
}

func (h *clusterHavoc) backlogRestart(ctx context.Context, rng *rand.Rand) error {
	// A stage every call passes (repair sees only the repairable ones).
	names := []string{streams.Accumulate, streams.Parse, streams.Validate, streams.Execute}
	st := names[rng.IntN(len(names))]
	var held []*proc
	for _, p := range h.procs {
		if p.stage == st {
			p.hold()
			held = append(held, p)
		}
	}
	t0 := time.Now()
	h.logf("holding %s down until its consumer has a backlog", st)
	want := uint64(max(5, h.cfg.Rate)) // about a second of calls
	var backlog uint64
	_ = testenv.Poll(10*time.Second, 50*time.Millisecond, func() error {
		backlog = 0
		for _, d := range streams.Durables(st, 0) { // its lanes too
			c, err := h.js.Consumer(ctx, streams.DurableStream(st, d), d)
			if err != nil {
				return err
			}
			backlog += c.CachedInfo().NumPending + uint64(c.CachedInfo().NumAckPending)
		}
		backlog += h.partitionsBacklog(ctx, st)
		if backlog < want {
			return fmt.Errorf("chaos: %s backlog %d", st, backlog)
		}
		return nil
	})
	down := time.Since(t0)
	for _, p := range held {
		if err := p.release(); err != nil {
			return err
		}
	}
	h.logf("started %s again onto a backlog of %d", st, backlog)
	h.record(Fault{Kind: FaultBacklogStage, Target: st, when: time.Now(), Note: fmt.Sprintf("backlog %d after %v down; times from the restart", backlog, down.Round(time.Millisecond))})
	return nil
}

// partitionsBacklog is what waits for st in its partition streams beyond
// partition 0 (cfg.Partitions > 1): a laned stage's durables there,
// accumulate's durables in TOOLGATE_RESPONSES' and TOOLGATE_IN's
// partitions, and execute's groups' calls (its stream's messages).
func (h *clusterHavoc) partitionsBacklog(ctx context.Context, st string) uint64 {
	list := streams.PartitionStreamNames
	if st == streams.Accumulate { // its durables in TOOLGATE_RESPONSES' and TOOLGATE_IN's partitions
		list = func(ctx context.Context, js jetstream.JetStream, _ string) ([]string, error) {
			return streams.IngestPartitionNames(ctx, js)
		}
	}
	names, err := list(ctx, h.js, st)
	if err != nil {
		return 0
	}
	var n uint64
	for _, name := range names {
		if st == streams.Execute {
			if s, err := h.js.Stream(ctx, name); err == nil {
				n += s.CachedInfo().State.Msgs
			}
			continue
		}
		for _, d := range streams.Durables(st, 0) {
			if c, err := h.js.Consumer(ctx, name, d); err == nil {
				n += c.CachedInfo().NumPending + uint64(c.CachedInfo().NumAckPending)
			}
		}
	}
	return n
}
