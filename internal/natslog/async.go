// Package natslog logs what a NATS connection reports on its own.
package natslog

import (
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// Every is how often the processes log one kind of asynchronous NATS
// error again while it repeats.
const Every = 10 * time.Second

// AsyncErrors logs what the NATS client reports outside of any call, which
// it otherwise drops without a word: a permission the process's user lacks
// (the server refuses a pull request, a subscription or a publish without
// answering it: a stage stands idle while its health says ready, a publish
// waits out its deadline), or messages the client dropped as a slow
// consumer (they come back only after the consumer's AckWait). An error
// that repeats is logged again only after the interval every (Every in the
// processes), with how often it came meanwhile, so a refused request sent
// again and again cannot flood the log.
func AsyncErrors(log zerolog.Logger, every time.Duration) nats.ErrHandler {
	var mu sync.Mutex
	type seen struct {
		at    time.Time
		count int
	}
	last := map[string]*seen{}
	return func(_ *nats.Conn, sub *nats.Subscription, err error) {
		if err == nil {
			return
		}
		key := err.Error()
		now := time.Now()
		mu.Lock()
		s, ok := last[key]
		if ok && now.Sub(s.at) < every {
			s.count++
			mu.Unlock()
			return
		}
		repeats := 0
		if ok {
			repeats = s.count
		}
		if len(last) > 64 { // errors that name subjects vary: keep the map small
			clear(last)
		}
		last[key] = &seen{at: now}
		mu.Unlock()
		ev := log.Error().Err(err)
		if sub != nil {
			ev = ev.Str("subscription", sub.Subject)
		}
		if repeats > 0 {
			ev = ev.Int("repeated", repeats)
		}
		ev.Msg("nats: asynchronous error")
	}
}
