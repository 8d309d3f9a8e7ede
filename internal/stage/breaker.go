package stage

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// Circuit configures the circuit breaker of every executor group.
type Circuit struct {
	Failures int           // failures within Window that open it; default 5
	Window   time.Duration // default 10s
	Cooldown time.Duration // how long it stays open before a probe; default 5s
}

func (c Circuit) withDefaults() Circuit {
	if c.Failures <= 0 {
		c.Failures = 5
	}
	if c.Window <= 0 {
		c.Window = 10 * time.Second
	}
	if c.Cooldown <= 0 {
		c.Cooldown = 5 * time.Second
	}
	return c
}

// Circuit states.
const (
	CircuitClosed   = "closed"
	CircuitOpen     = "open"
	CircuitHalfOpen = "half_open"
)

// breaker is one executor group's circuit breaker (issue 38). A failure is
// a call whose executor did not take it (no responders, connection refused,
// HTTP 5xx not processed: execute's executor_unavailable). Failures
// Circuit.Failures times within Circuit.Window open it: the group's durable
// is paused until the cool-down ends and its MaxAckPending set to 1, in one
// consumer update, so calls wait in the stream holding no pending slot and
// no goroutine, and the first delivery after the cool-down is the one
// probe. The probe's success restores the group's MaxAckPending (closed:
// the waiting calls run in stream order); its failure pauses it again.
//
// The durable is the state every replica shares: a replica that opens it
// pauses it for all, and whichever replica runs the probe closes it.
type breaker struct {
	js  jetstream.JetStream
	cfg jetstream.ConsumerConfig // the group's durable, closed
	// lanes are the group's lane durables, closed (streams.
	// ExecuteGroupConsumers): paused, limited and resumed with cfg, each
	// the same way, so an open circuit holds every lane's calls.
	lanes []jetstream.ConsumerConfig
	// parts are the group's durables in its partition streams beyond 0
	// (streams.ExecuteGroupPartitionConsumers), closed, as the group's
	// workers read them now; nil: none. They are paused, limited and
	// resumed with cfg: an open circuit holds every partition's calls.
	parts   func() []streamConfig
	circuit Circuit
	log     zerolog.Logger
	now     func() time.Time
	onState func(state string) // metrics; may be nil
	// failFast: while open, calls fail at once (admit) instead of waiting
	// in a paused durable; the durable is never paused.
	failFast bool

	mu sync.Mutex
	// refused counts calls admit failed fast whose handler run observe has
	// not seen yet: they end without an error, and are no success of the
	// executor's.
	refused int
	probing bool // failFast, half-open: the one probe is out
	fails   []time.Time
	state   string
	until   time.Time // end of the cool-down while open
	since   time.Time
}

func newBreaker(js jetstream.JetStream, cfg jetstream.ConsumerConfig, c Circuit, log zerolog.Logger) *breaker {
	return &breaker{js: js, cfg: cfg, circuit: c.withDefaults(), log: log, now: time.Now, state: CircuitClosed, since: time.Now()}
}

// State is the circuit's state and since when.
func (b *breaker) State() (string, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == CircuitOpen && !b.now().Before(b.until) {
		return CircuitHalfOpen, b.until
	}
	return b.state, b.since
}

// observe is told of every call the group's worker handled and what the
// handler returned.
func (b *breaker) observe(err error) {
	failed := isUnavailable(err)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil && b.refused > 0 {
		b.refused--
		return
	}
	b.probing = false // whatever the probe met, the next call may probe
	if err != nil && !failed {
		return // the executor answered, or the failure is not the executor's
	}
	now := b.now()
	if !failed {
		b.fails = b.fails[:0]
		if b.state != CircuitClosed {
			b.set(CircuitClosed, now)
			if b.failFast {
				go b.apply(b.cfg, "closed: the probe succeeded")
				return
			}
			go func() {
				for _, sc := range b.all() {
					if b.applyIn(sc.stream, sc.cfg, "closed: the probe succeeded") {
						b.resume(sc.stream, sc.cfg.Durable)
					}
				}
			}()
		}
		return
	}
	if b.state == CircuitOpen {
		if now.Before(b.until) {
			return // an in-flight call failing after it opened
		}
		b.reopen(now, "re-opened: the probe failed")
		return
	}
	b.fails = append(b.fails, now)
	cut := 0
	for cut < len(b.fails) && now.Sub(b.fails[cut]) > b.circuit.Window {
		cut++
	}
	b.fails = b.fails[cut:]
	if len(b.fails) >= b.circuit.Failures {
		b.reopen(now, "opened: the executor failed")
	}
}

// admit reports whether a call may go to the executor: always, unless the
// group fails fast and its circuit is open — or half-open with its one probe
// out. A refused call must end without an error (circuit_open), and its
// handler run is then not counted as the executor's success.
func (b *breaker) admit() bool {
	if !b.failFast {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == CircuitClosed {
		return true
	}
	if !b.probing && !b.now().Before(b.until) {
		b.probing = true // this call is the probe
		return true
	}
	b.refused++
	return false
}

// reopen opens the circuit until now + cool-down. Called with b.mu held.
func (b *breaker) reopen(now time.Time, why string) {
	b.fails = b.fails[:0]
	b.until = now.Add(b.circuit.Cooldown)
	b.set(CircuitOpen, now)
	if b.failFast { // not paused: marked, for readers (metrics.CircuitOf)
		cfg := b.cfg
		cfg.Metadata = maps.Clone(cfg.Metadata)
		if cfg.Metadata == nil {
			cfg.Metadata = map[string]string{}
		}
		cfg.Metadata[streams.GroupOpenUntilKey] = b.until.UTC().Format(time.RFC3339Nano)
		go b.apply(cfg, why+"; its calls fail fast")
		return
	}
	until := b.until
	go func() {
		for _, sc := range b.all() {
			sc.cfg.MaxAckPending = 1
			if b.applyIn(sc.stream, sc.cfg, why) {
				b.pause(sc.stream, sc.cfg.Durable, until)
			}
		}
	}()
}

// streamConfig is a durable's configuration and its stream.
type streamConfig struct {
	stream string
	cfg    jetstream.ConsumerConfig
}

// all are the group's durable and its lanes', closed, in partition 0 and
// then in its other partitions.
func (b *breaker) all() []streamConfig {
	var out []streamConfig
	for _, cfg := range append([]jetstream.ConsumerConfig{b.cfg}, b.lanes...) {
		out = append(out, streamConfig{streams.StreamExecute, cfg})
	}
	if b.parts != nil {
		out = append(out, b.parts()...)
	}
	return out
}

// pause pauses the group's durable until until (a consumer update does
// not change a pause: it takes the pause API, nats-server 2.11).
func (b *breaker) pause(stream, durable string, until time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.js.PauseConsumer(ctx, stream, durable, until); err != nil {
		b.log.Error().Err(err).Str("durable", durable).Msg("execute: circuit breaker could not pause the group's durable")
	}
}

func (b *breaker) set(state string, now time.Time) {
	b.state, b.since = state, now
	if b.onState != nil {
		b.onState(state)
	}
}

// apply updates the group's durable.
func (b *breaker) apply(cfg jetstream.ConsumerConfig, why string) bool {
	return b.applyIn(streams.StreamExecute, cfg, why)
}

// applyIn updates one of the group's durables in stream.
func (b *breaker) applyIn(stream string, cfg jetstream.ConsumerConfig, why string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.js.UpdateConsumer(ctx, stream, cfg); err != nil {
		b.log.Error().Err(err).Str("durable", cfg.Durable).Msg("execute: circuit breaker could not update the group's durable")
		return false
	}
	b.log.Warn().Str("durable", cfg.Durable).Str("circuit", why).Msg("execute: executor group circuit")
	return true
}

// resume ends a pause early (a call succeeded while it was open).
func (b *breaker) resume(stream, durable string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.js.ResumeConsumer(ctx, stream, durable); err != nil {
		b.log.Error().Err(err).Str("durable", durable).Msg("execute: circuit breaker could not resume the group's durable")
	}
}

// isUnavailable reports whether err says the executor did not take the call.
func isUnavailable(err error) bool {
	var we *worker.Error
	return errors.As(err, &we) && we.Code == "executor_unavailable"
}
