// Package worker is the one JetStream loop every stage shares: a durable
// pull consumer whose replicas share the work, outputs published
// asynchronously with message ids, inputs acked only after every output's
// publish ack arrived.
package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
)

// Msg is one delivered input as a handler sees it.
type Msg struct {
	Subject      string
	Header       nats.Header
	Data         []byte
	NumDelivered uint64
	StreamSeq    uint64
}

// Output is one message a handler wants published. MsgID becomes the
// Nats-Msg-Id, so a redelivered input cannot publish the same output twice.
type Output struct {
	Subject string
	MsgID   string
	Header  nats.Header
	Data    []byte
	// After holds this output (and every one after it) until each output
	// before it is stored: whoever reads it then finds those too. A call's
	// result is published After its status record and dead letter, so a
	// producer that has the result and asks an operator finds the call's
	// record and evidence (toolgate publish --wait, then toolgate status).
	// It costs the input one more publish round trip before its ack, taken
	// in the ack loop, not in a handler.
	After bool
}

// Handler turns one input into zero or more outputs. Zero outputs and a nil
// error means the input is done and is acked. The handler must not ack.
type Handler func(ctx context.Context, m Msg) ([]Output, error)

// DeadLetter builds the dead letter for an input the handler failed on, plus
// anything else that must be published with it (a terminal result, a status
// record). The input is terminated only once all of it is stored.
type DeadLetter func(m Msg, code string, err error) []Output

// Config configures one stage's worker.
type Config struct {
	Stage       string // also the durable consumer name, unless Durable is set
	Durable     string // the durable consumer, when not Stage (an executor group's)
	Stream      string
	Concurrency int // handler goroutines; default 1
	Batch       int // messages buffered from the server; default 100
	// Backoff is the nak delay after the nth delivery failed, for a
	// consumer without a BackOff of its own; default Backoff. MaxDeliver,
	// AckWait and BackOff come from the consumer's configuration on the
	// server (Run), so they are set in one place: the consumer.
	Backoff    func(n uint64) time.Duration
	DeadLetter DeadLetter
	Log        zerolog.Logger
	// Observe, when set, is told how long the handler took for each input
	// and what it returned (metrics). It must not block.
	Observe func(stage string, d time.Duration, err error)
	// Gap, when set, is told of each stand-still of the stage (gap.go): a
	// time of at least a millisecond during which the worker was ready for
	// input, input waited on the server, and none was delivered. It must
	// not block.
	Gap func(stage string, d time.Duration)
	// Retrying, when set, builds what is published when an input is nak'ed
	// for a transient failure, once per failed delivery (a call's status
	// record saying what it waits for; retrying.go). The nak waits for
	// those publish acks, whatever they say: they never change the input's
	// fate. nil: nothing is published.
	Retrying func(m Msg, err error, a Attempt) []Output
	// RetryingOnWait runs Retrying also for an input the handler asked to
	// Retry (not a failure: it waits, e.g. for a limit's window), so its
	// record can say what it waits for. Attempt then counts deliveries.
	RetryingOnWait bool
	// Key, when set, orders the inputs: inputs of one key are handled one
	// at a time in delivery order, inputs of different keys concurrently
	// (up to Concurrency). Unset: any handler goroutine takes any input.
	Key func(m Msg) string
	// Shares, when set, are the fairness keys the worker takes its inputs
	// from in weighted round robin (fair.go), each with its durables of
	// its Stream (default Stream); unset: the one durable named Stage.
	Shares []Share
	// Skip, when set, tells the inputs of a durable of Shares that are not
	// its to handle (another durable of the worker has them: accumulate's
	// main durable and its lanes, streams.AccumulateOwner): they are acked
	// and never handed to the handler.
	Skip func(durable, subject string, streamSeq uint64) bool
	// Window is how many handled inputs may wait for their outputs'
	// publish acks before the handlers wait; default 4 x Batch. Each such
	// output waits in the stream's ingest, one FIFO for every tenant, so a
	// worker that reads fairness lanes keeps it small (FairWindow).
	Window int
	// Quantum is how many inputs a share of weight 1 gets per round when
	// others have work too; default 8.
	Quantum int
	// Schedule, when set, names the subject of a scheduled retry of the
	// input on subject with stream sequence id (schedule.go): a transient
	// failure is retried by a scheduled copy of the input, and the input
	// acked, instead of a nak. MaxDeliver then counts attempts across the
	// copies. The schedule must be a subject of the input's own stream (a
	// partition's, streams.ScheduleFor), which needs AllowMsgSchedules
	// (nats-server 2.12).
	Schedule func(subject, id string) string
	// Redelivered, when set, is given every input delivered before
	// (NumDelivered > 1); the handler, Retrying and DeadLetter see what it
	// returns (the waits a call's record kept, carried into its history).
	Redelivered func(m Msg) Msg
	// Parts, when set, lists the partition streams of the worker's stage
	// that exist besides partition 0 (streams.PartitionStreamsOf): each
	// holds the worker's durables (every durable of Shares, or Durable)
	// under the same names, and the worker reads them all, a durable's
	// partitions as one (fair.go). It is asked at start and every Resync;
	// when the list changes the worker drains (finishes and acks what it
	// holds, as at a stop) and starts again on the new list. A partition
	// whose durable is not found yet is left out until the next look.
	Parts func(ctx context.Context) ([]string, error)
	// Resync is how often Parts is asked again; default 30s.
	Resync time.Duration
	// PartOf, when set, tells which partition streams of Parts hold a
	// durable read in stream (its partition 0 stream): accumulate's
	// claimed durables are in TOOLGATE_RESPONSES' partitions, its other
	// durables have none. Unset: every part holds every durable.
	PartOf func(stream, part string) bool
}

func (c *Config) setDefaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = 1
	}
	if c.Batch <= 0 {
		c.Batch = 100
	}
	if c.Durable == "" {
		c.Durable = c.Stage
	}
	if c.Backoff == nil {
		c.Backoff = Backoff
	}
	if c.Window <= 0 {
		c.Window = 4 * c.Batch
	}
	if c.Quantum <= 0 {
		c.Quantum = 8
	}
	if c.Resync <= 0 {
		c.Resync = 30 * time.Second
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case c.Stage == "":
		return errors.New("worker: stage is required")
	case c.Stream == "":
		return errors.New("worker: stream is required")
	case c.DeadLetter == nil:
		return errors.New("worker: a dead-letter builder is required: a failed input must keep its evidence")
	}
	return nil
}

// Worker runs one stage's loop.
type Worker struct {
	js    jetstream.JetStream
	cfg   Config
	h     Handler
	ready atomic.Bool
	// From the consumer's configuration on the server, set by Run before
	// any message is handled.
	maxDeliver int             // <= 0: unlimited
	backOff    []time.Duration // nil: cfg.Backoff
	ackWait    time.Duration   // for KeepAlive
	// missing: a partition's durable was not found at the last start;
	// the next look at the partitions starts again whatever it finds.
	missing atomic.Bool
}

// New returns a worker for an existing durable consumer named cfg.Stage.
func New(js jetstream.JetStream, cfg Config, h Handler) (*Worker, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Worker{js: js, cfg: cfg, h: h}, nil
}

// key adapts cfg.Key to a delivered message.
func (w *Worker) key() func(jetstream.Msg) string {
	if w.cfg.Key == nil || w.cfg.Concurrency < 2 {
		return nil
	}
	return func(m jetstream.Msg) string {
		return w.cfg.Key(Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()})
	}
}

// Ready reports whether the worker is consuming.
func (w *Worker) Ready() bool { return w.ready.Load() }

type pending struct {
	msg      jetstream.Msg
	in       Msg // as the handler saw it, for a dead letter built late
	futures  []jetstream.PubAckFuture
	tooLarge error         // a publish failed for its size: retrying cannot help
	retrying bool          // the outputs say the input waits; it is nak'ed whatever their acks say
	term     bool          // a dead letter was published: Term once it is acked
	reason   string        // the failure class, sent with the Term (advisory)
	nak      bool          // nak without waiting (publish could not even start)
	delay    time.Duration // nak delay
	later    []Output      // published once futures are stored (Output.After)
}

// Run consumes until ctx is cancelled, then drains: it stops fetching,
// finishes every message already handed out, waits for their publish acks,
// acks them, and returns. With Parts it starts again, drained, whenever
// the partition streams change.
func (w *Worker) Run(ctx context.Context) error {
	if w.cfg.Parts == nil {
		return w.run(ctx, nil)
	}
	parts, err := w.cfg.Parts(ctx)
	for {
		if err != nil {
			w.cfg.Log.Warn().Err(err).Str("stage", w.cfg.Stage).Msg("partition streams: reading partition 0 until the next look")
		}
		rctx, cancel := context.WithCancel(ctx)
		changed := make(chan []string, 1)
		go func() { // the next look that finds other streams stops this run
			t := time.NewTicker(w.cfg.Resync)
			defer t.Stop()
			for {
				select {
				case <-rctx.Done():
					return
				case <-t.C:
				}
				now, err := w.cfg.Parts(rctx)
				if err == nil && (!slices.Equal(now, parts) || w.missing.Load()) {
					changed <- now
					cancel()
					return
				}
			}
		}()
		rerr := w.run(rctx, parts)
		cancel()
		if ctx.Err() != nil || rerr != nil {
			return rerr
		}
		select {
		case parts = <-changed:
			err = nil
			w.cfg.Log.Info().Str("stage", w.cfg.Stage).Strs("partitions", parts).Msg("partition streams changed: reading them")
		default:
			return nil
		}
	}
}

// run consumes the worker's durables in partition 0 and in parts until ctx
// is cancelled, then drains.
func (w *Worker) run(ctx context.Context, parts []string) error {
	srcs := w.sources(parts)
	iters := make([]jetstream.MessagesContext, len(srcs))
	w.missing.Store(false)
	stopAll := func() {
		for _, it := range iters {
			if it != nil {
				it.Stop()
			}
		}
	}
	for i, src := range srcs {
		if src.none {
			continue // no such durable there (Config.PartOf)
		}
		cons, err := w.js.Consumer(ctx, src.stream, src.durable)
		if err != nil && i%(1+len(parts)) != 0 { // a partition's durable not applied yet: the next look
			w.cfg.Log.Warn().Err(err).Str("stage", w.cfg.Stage).Str("stream", src.stream).Str("durable", src.durable).Msg("partition durable; left out until the next look")
			w.missing.Store(true)
			continue
		}
		if err != nil {
			stopAll()
			return fmt.Errorf("worker: %s: consumer %s: %w", w.cfg.Stage, src.durable, err)
		}
		if i == 0 {
			cc := cons.CachedInfo().Config
			w.maxDeliver, w.backOff, w.ackWait = cc.MaxDeliver, cc.BackOff, cc.AckWait
		}
		iter, err := cons.Messages(pullOptions(w.cfg.Batch)...)
		if err != nil {
			stopAll()
			return fmt.Errorf("worker: %s: messages %s: %w", w.cfg.Stage, src.durable, err)
		}
		iters[i] = iter
	}
	w.ready.Store(true)
	defer w.ready.Store(false)

	in := newLanes(w.key())
	acks := make(chan pending, w.cfg.Window)
	var handlers, acker sync.WaitGroup

	acker.Add(1)
	go func() { defer acker.Done(); w.ackLoop(acks) }()
	for range w.cfg.Concurrency {
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			in.run(func(m jetstream.Msg) { acks <- w.handle(m) })
		}()
	}
	go func() {
		<-ctx.Done()
		for _, it := range iters {
			if it != nil {
				it.Drain()
			}
		}
	}()
	if len(iters) == 1 {
		w.pull(iters[0], in.send)
	} else {
		w.fair(srcs, iters, 1+len(parts), in.send)
	}
	in.close()
	handlers.Wait()
	close(acks)
	acker.Wait()
	return nil
}

// pull hands every message of iter to deliver until iter is closed.
func (w *Worker) pull(iter jetstream.MessagesContext, deliver func(jetstream.Msg)) {
	for {
		ready := time.Now()
		m, err := next(iter)
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return
			}
			// Heartbeat misses and reconnects surface here; the iterator
			// recovers by itself, so only pace the loop.
			w.cfg.Log.Warn().Err(err).Str("stage", w.cfg.Stage).Msg("fetch")
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if w.cfg.Gap != nil {
			w.gap(m, ready)
		}
		deliver(m)
	}
}

// handle runs the handler on one message and starts publishing its outputs.
// It never returns before every publish has been handed to the client.
// Every output is checked against what NATS can store before any is
// published: one that cannot fit makes the input a permanent
// output_too_large failure, and nothing of it is published twice.
func (w *Worker) handle(jm jetstream.Msg) pending {
	md, err := jm.Metadata()
	if err != nil {
		return pending{msg: jm, nak: true, delay: time.Second}
	}
	m := Msg{Subject: jm.Subject(), Header: jm.Headers(), Data: jm.Data(), NumDelivered: md.NumDelivered, StreamSeq: md.Sequence.Stream}
	if (m.NumDelivered > 1 || m.Header.Get(HeaderAttempt) != "") && w.cfg.Redelivered != nil { // tried before
		m = w.redelivered(m)
	}
	start := time.Now()
	outs, herr := w.call(jm, m)
	if w.cfg.Observe != nil {
		w.cfg.Observe(w.cfg.Stage, time.Since(start), herr)
	}
	if herr == nil {
		ferr := w.fits(outs)
		if ferr == nil {
			return w.publish(jm, m, outs, false)
		}
		herr = Permanent(string(call.OutputTooLarge), ferr)
	}
	if d, ok := retryAfter(herr); ok {
		if w.cfg.Retrying != nil && w.cfg.RetryingOnWait {
			return w.retry(jm, m, herr, d) // the stage records what the input waits for
		}
		return pending{msg: jm, nak: true, delay: d}
	}
	code, permanent, delay := classify(herr)
	log := w.cfg.Log.With().Str("stage", w.cfg.Stage).Uint64("seq", m.StreamSeq).Uint64("delivered", m.NumDelivered).Str("code", code).Err(herr).Logger()
	n := m.NumDelivered
	if w.cfg.Schedule != nil {
		n = attempt(m)
	}
	if !permanent && (w.maxDeliver <= 0 || n < uint64(w.maxDeliver)) {
		log.Warn().Msg("transient failure, will retry")
		if w.cfg.Schedule != nil {
			return w.reschedule(jm, m, herr, n, max(delay, w.nakDelay(n)))
		}
		return w.retry(jm, m, herr, max(delay, w.nakDelay(m.NumDelivered)))
	}
	if !permanent {
		code = "max_deliver"
	}
	log.Error().Msg("dead-lettering input")
	return w.deadLetter(jm, m, code, herr)
}

// deadLetter publishes the dead letter of m (Term once it is stored). A dead
// letter that cannot fit is not published: the input is nak'ed, never
// terminated, since its evidence was not kept.
func (w *Worker) deadLetter(jm jetstream.Msg, m Msg, code string, err error) pending {
	outs := w.cfg.DeadLetter(m, code, err)
	if ferr := w.fits(outs); ferr != nil {
		w.cfg.Log.Error().Err(ferr).Str("stage", w.cfg.Stage).Uint64("seq", m.StreamSeq).Str("code", code).Msg("dead letter does not fit what NATS can store: input kept and redelivered")
		return pending{msg: jm, in: m, nak: true, delay: w.nakDelay(m.NumDelivered)}
	}
	p := w.publish(jm, m, outs, true)
	p.reason = code
	return p
}

// nakDelay is the delay before the next delivery after the nth failed: the
// consumer's BackOff (its last step repeating) when it has one, else
// cfg.Backoff.
func (w *Worker) nakDelay(n uint64) time.Duration {
	if k := len(w.backOff); k > 0 {
		return w.backOff[min(int(max(n, 1))-1, k-1)]
	}
	return w.cfg.Backoff(n)
}

// fits checks every output against the connection's max payload (read from
// the server's INFO at run time) and the header limit.
func (w *Worker) fits(outs []Output) error {
	if len(outs) == 0 {
		return nil // no need to take the connection's lock
	}
	var maxPayload int64
	if nc := w.js.Conn(); nc != nil {
		maxPayload = nc.MaxPayload()
	}
	for _, o := range outs {
		if err := Fits(o, maxPayload); err != nil {
			return err
		}
	}
	return nil
}

// call runs the handler; a panic is a permanent failure of this input, not
// of the worker.
func (w *Worker) call(jm jetstream.Msg, m Msg) (outs []Output, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Permanent("panic", fmt.Errorf("handler panic: %v\n%s", r, debug.Stack()))
		}
	}()
	return w.h(withProgress(jm, w.ackWait, w.maxDeliver), m)
}

func (w *Worker) publish(jm jetstream.Msg, m Msg, outs []Output, term bool) pending {
	p := pending{msg: jm, in: m, term: term}
	if i := slices.IndexFunc(outs, func(o Output) bool { return o.After }); i > 0 {
		outs, p.later = outs[:i], outs[i:]
	}
	return w.publishAsync(p, outs)
}

// publishAsync starts publishing outs and adds their futures to p.
func (w *Worker) publishAsync(p pending, outs []Output) pending {
	for _, o := range outs {
		nm := &nats.Msg{Subject: o.Subject, Header: o.Header, Data: o.Data}
		var opts []jetstream.PublishOpt
		if o.MsgID != "" {
			opts = append(opts, jetstream.WithMsgID(o.MsgID))
		}
		f, err := w.js.PublishMsgAsync(nm, opts...)
		if err != nil {
			w.cfg.Log.Warn().Err(err).Str("stage", w.cfg.Stage).Str("subject", o.Subject).Msg("publish")
			p.nak, p.delay = true, time.Second
			if tooLarge(err) {
				p.tooLarge = err
			}
			return p
		}
		p.futures = append(p.futures, f)
	}
	return p
}

// ackLoop settles inputs in the order they were handled. An input with
// outputs held back (Output.After) has them published once the others are
// stored, and is settled by a second loop once they are stored too, so the
// round trip they wait for holds up no other input's ack.
func (w *Worker) ackLoop(acks <-chan pending) {
	later := make(chan pending, max(cap(acks), 1))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range later {
			w.settle(p)
		}
	}()
	for p := range acks {
		if len(p.later) > 0 && !p.nak {
			held := p.later
			p.later = nil
			if p.tooLarge = w.stored(p.futures); p.tooLarge == nil {
				later <- w.publishAsync(pending{msg: p.msg, in: p.in, term: p.term, reason: p.reason, retrying: p.retrying}, held)
				continue
			}
			// An output before them failed: they are never published, and
			// the input is nak'ed (or dead-lettered, for its size) by settle.
			p.futures, p.nak = nil, true
			if p.tooLarge == errNotStored {
				p.tooLarge = nil
			}
		}
		w.settle(p)
	}
	close(later)
	<-done
}

// errNotStored is stored's answer for a publish that failed for another
// reason than its size.
var errNotStored = errors.New("worker: an output was not stored")

// stored waits for every future (each can be read once): nil when each was
// stored, the size refusal when one was refused for its size, else
// errNotStored.
func (w *Worker) stored(futures []jetstream.PubAckFuture) error {
	var failed error
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			w.cfg.Log.Warn().Err(err).Str("stage", w.cfg.Stage).Str("subject", f.Msg().Subject).Msg("publish ack")
			if tooLarge(err) {
				failed = err
			} else if failed == nil {
				failed = errNotStored
			}
		}
	}
	return failed
}

// settle acks p's input when every output is stored, and naks it when any
// publish failed (a dead letter that could not be published is nak'ed,
// never terminated: its evidence was not kept). A publish the server
// refused for its size can never succeed: the input is dead-lettered as
// output_too_large instead of being redelivered.
func (w *Worker) settle(p pending) {
	failed := p.nak
	tooBig := p.tooLarge
	for _, f := range p.futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			w.cfg.Log.Warn().Err(err).Str("stage", w.cfg.Stage).Str("subject", f.Msg().Subject).Msg("publish ack")
			failed = true
			if tooLarge(err) {
				tooBig = err
			}
		}
	}
	if failed && tooBig != nil && !p.term && !p.retrying {
		w.cfg.Log.Error().Err(tooBig).Str("stage", w.cfg.Stage).Uint64("seq", p.in.StreamSeq).Msg("dead-lettering input: an output is too large to store")
		w.settle(w.deadLetter(p.msg, p.in, string(call.OutputTooLarge), Permanent(string(call.OutputTooLarge), tooBig)))
		return
	}
	var err error
	switch {
	case failed:
		d := p.delay
		if d == 0 {
			d = time.Second
		}
		err = p.msg.NakWithDelay(d)
	case p.term:
		err = p.msg.TermWithReason(p.reason)
	default:
		err = p.msg.Ack()
	}
	if err != nil {
		w.cfg.Log.Warn().Err(err).Str("stage", w.cfg.Stage).Msg("settle input")
	}
}
