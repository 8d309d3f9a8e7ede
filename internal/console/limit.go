package console

import (
	"sync"
	"time"
)

// Failed logins: each client address may fail loginBurst times at once,
// then once per loginEvery. Tokens toolgate makes are 128 random bits, so
// guessing is hopeless anyway; the bound keeps a guessing loop (any local
// process, a rebinding web page) from costing the console, and the log
// from drowning.
const (
	loginBurst = 10
	loginEvery = 6 * time.Second
	// maxClients bounds the addresses remembered; past it, every new
	// address shares one budget.
	maxClients = 4096
)

// limiter counts failed logins per client address.
type limiter struct {
	mu sync.Mutex
	by map[string]*budget
}

type budget struct {
	left    float64   // failures still allowed
	at      time.Time // when left was computed
	refused bool      // a refusal was logged since the last allowed attempt
}

func newLimiter() *limiter { return &limiter{by: map[string]*budget{}} }

// get is client's budget refilled to now; the caller holds mu.
func (l *limiter) get(client string, now time.Time) *budget {
	b, ok := l.by[client]
	if !ok {
		if len(l.by) >= maxClients {
			l.prune(now)
		}
		if len(l.by) >= maxClients {
			client = "" // the shared budget of addresses past the bound
			if b, ok = l.by[client]; ok {
				b.refill(now)
				return b
			}
		}
		b = &budget{left: loginBurst, at: now}
		l.by[client] = b
		return b
	}
	b.refill(now)
	return b
}

func (b *budget) refill(now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.left = min(loginBurst, b.left+float64(d)/float64(loginEvery))
		b.at = now
	}
}

// prune forgets addresses whose budget is whole again.
func (l *limiter) prune(now time.Time) {
	for k, b := range l.by {
		if b.refill(now); b.left >= loginBurst {
			delete(l.by, k)
		}
	}
}

// take spends one of client's failures up front, so that attempts made
// at once cannot exceed the budget; false: none left, and how long until
// one is. A login that succeeds gives it back (refund).
func (l *limiter) take(client string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.get(client, now)
	if b.left >= 1 {
		b.left--
		b.refused = false
		return 0, true
	}
	return time.Duration((1 - b.left) * float64(loginEvery)), false
}

// refund gives back the failure take spent on a login that succeeded.
func (l *limiter) refund(client string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.get(client, now)
	b.left = min(loginBurst, b.left+1)
}

// firstRefusal reports whether this is the first refusal of client since
// it was last allowed: one log line per burst of refusals.
func (l *limiter) firstRefusal(client string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.by[client]
	if !ok {
		b, ok = l.by[""]
	}
	if !ok || b.refused {
		return false
	}
	b.refused = true
	return true
}
