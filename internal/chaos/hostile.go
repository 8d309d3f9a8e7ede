package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// HostileConfig sizes a hostile soak: `toolgate up` as a child process under
// an address-space cap, a baseline of valid calls, then the same valid load
// while the hostile inputs of issue 13 are published.
type HostileConfig struct {
	Duration time.Duration // valid load per phase (default 10s)
	Rate     float64       // valid calls per second (default 50)
	MemCap   int64         // the child's RLIMIT_AS in bytes (default 4 GiB)
	Settle   time.Duration // bound on the wait for every outcome after the attack (default 3m)
	// After is how long valid load goes on once every hostile input has
	// its outcome, RSS being read at its end (default 1m; negative: none).
	After time.Duration
	// Inputs names the hostile inputs to publish (HostileInputs); nil: all.
	Inputs []string
	// BigEvents and BigEventSize: the streams of one huge event each
	// (default 10 of 15 MiB, cut to what the server accepts).
	BigEvents, BigEventSize int
	Dir                     string // work directory (the child's data and log); required
	Bin                     string // a built toolgate binary; empty: Build it into Dir
	Log                     io.Writer
}

func (c *HostileConfig) setDefaults() {
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Rate == 0 {
		c.Rate = 50
	}
	if c.MemCap == 0 {
		c.MemCap = 4 << 30
	}
	if c.Settle == 0 {
		c.Settle = 3 * time.Minute
	}
	if c.After == 0 {
		c.After = time.Minute
	}
	if c.BigEvents == 0 {
		c.BigEvents = 10
	}
	if c.BigEventSize == 0 {
		c.BigEventSize = 15 << 20
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// Phases of a soak, as labels of valid calls and memory samples.
const (
	PhaseBaseline = "baseline"
	PhaseAttack   = "attack"
	PhaseAfter    = "after"
	// phaseJudging: the harness reads results and dead letters, which
	// makes the server load each one (ten 8 MiB dead letters are 80 MiB
	// of fresh copies); its samples belong to no phase of the report.
	phaseJudging = "judging"
)

// RunHostile runs the soak in cfg.Dir and reports what it saw. An error
// means the soak could not be carried out; what it found is in the report.
func RunHostile(ctx context.Context, cfg HostileConfig) (HostileReport, error) {
	cfg.setDefaults()
	rep := HostileReport{Config: cfg}
	if cfg.Dir == "" {
		return rep, errors.New("chaos: HostileConfig.Dir is required")
	}
	inputs, err := selectInputs(cfg.Inputs)
	if err != nil {
		return rep, err
	}
	begin := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(cfg.Log, "hostile %6.1fs  %s\n", time.Since(begin).Seconds(), fmt.Sprintf(format, args...))
	}
	if cfg.Bin == "" {
		if cfg.Bin, err = BuildToolgate(filepath.Join(cfg.Dir, "bin")); err != nil {
			return rep, err
		}
		logf("built %s", cfg.Bin)
	}
	ch, err := startChild(cfg, begin)
	if err != nil {
		return rep, err
	}
	defer ch.stop()
	rep.Cap = ch.capDesc
	logf("toolgate up consuming on %s under %s", ch.natsURL, ch.capDesc)

	nc, err := nats.Connect(ch.natsURL, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond), nats.Name("toolgate hostile soak"))
	if err != nil {
		return rep, fmt.Errorf("chaos: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return rep, fmt.Errorf("chaos: %w", err)
	}
	tools, err := startHostileTools(ctx, nc, js, filepath.Join(cfg.Dir, "secrets"))
	if err != nil {
		return rep, err
	}
	defer tools.close()
	load, err := newValidLoad(nc)
	if err != nil {
		return rep, err
	}
	defer load.close()
	prefix := "hs" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)

	ch.setPhase(PhaseBaseline)
	logf("baseline: %.0f valid calls/s for %v", cfg.Rate, cfg.Duration)
	load.run(ctx, js, PhaseBaseline, prefix+"-b", cfg.Duration, cfg.Rate)
	if err := load.wait(ctx, PhaseBaseline, time.Minute); err != nil {
		logf("baseline: %v", err)
	}
	mem := map[string]string{PhaseBaseline: ch.scrapeMetrics()}

	ch.setPhase(PhaseAttack)
	logf("attack: the same valid load while %d hostile inputs are published", len(inputs))
	atk := newAttacker(js, nc, prefix+"-x", cfg, ch, logf)
	attacked := make(chan struct{})
	go func() {
		defer close(attacked)
		atk.run(ctx, inputs, cfg.Duration)
	}()
	load.run(ctx, js, PhaseAttack, prefix+"-a", cfg.Duration, cfg.Rate)
	<-attacked
	logf("attack published; settling (at most %v)", cfg.Settle)

	settleStart := time.Now()
	rs := &resultSet{}
	_ = testenv.Poll(cfg.Settle, time.Second, func() error {
		if err := rs.readNew(ctx, js); err != nil {
			return err
		}
		missing := load.missing(rs)
		open := atk.unsettled(rs)
		if len(missing) > 0 || len(open) > 0 {
			return fmt.Errorf("%d valid calls without a result; hostile inputs unsettled: %v", len(missing), open)
		}
		return nil
	})
	rep.Settle = time.Since(settleStart)
	mem[PhaseAttack] = ch.scrapeMetrics()

	if cfg.After > 0 {
		// Valid load, not idleness: a deployment goes on serving, and an
		// idle Go program may run no garbage collection for two minutes,
		// so idleness would measure the GC's timer, not what is held.
		ch.setPhase(PhaseAfter)
		logf("after: %.0f valid calls/s for %v, RSS read at its end", cfg.Rate, cfg.After)
		load.run(ctx, js, PhaseAfter, prefix+"-r", cfg.After, cfg.Rate)
		mem[PhaseAfter] = ch.endPhase()
		if err := load.wait(ctx, PhaseAfter, time.Minute); err != nil {
			logf("after: %v", err)
		}
	}
	ch.setPhase(phaseJudging)
	if err := rs.readNew(ctx, js); err != nil {
		logf("read results: %v", err)
	}
	letters, err := listLetters(ctx, js)
	if err != nil {
		logf("read dead letters: %v", err)
	}
	rep.Metrics = ch.scrapeMetrics()
	rep.Crashes, rep.PeakRSS, rep.PeakHWM = ch.figures()
	low, last := ch.rssByPhase()
	rep.AfterLow, rep.Mem = low[PhaseAfter], map[string]MemFigures{}
	for ph, text := range mem {
		rep.Mem[ph] = memFigures(last[ph], text)
	}
	rep.CPU = ch.cpuByPhase()
	rep.Valid = load.judge(rs)
	rep.Inputs = atk.judge(ctx, js, rs, letters, load, tools, rep.Metrics)
	rep.Total = time.Since(begin)
	logf("done: %d crashes, %d valid calls lost", len(rep.Crashes), rep.lostValid())
	return rep, nil
}
