package toolserver

import (
	"fmt"

	"github.com/nats-io/nats.go/micro"
)

// Concurrency lets up to n requests of one tool run at once in this
// process (default 1: one at a time, for a Func that is not safe for
// concurrent use). nats.go's micro framework hands a tool's requests to its
// handler one after the other, so without this one slow call holds every
// other call of the tool behind it, and an executor group whose tools
// definitions allow 8 calls at once (executor.concurrency) ran 1 per
// process. Give it the group's concurrency, and the Func must then be safe
// for concurrent use. A request waits for a free slot in the subscription,
// as before; status queries and replays take a slot too.
func Concurrency(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("toolserver: concurrency %d: want 1 or more", n)
		}
		o.concurrency = n
		return nil
	}
}

// concurrent runs h's requests in up to n goroutines; n <= 1: h itself.
func concurrent(n int, h micro.HandlerFunc) micro.HandlerFunc {
	if n <= 1 {
		return h
	}
	slots := make(chan struct{}, n)
	return func(r micro.Request) {
		slots <- struct{}{} // the subscription waits while every slot is taken
		go func() {
			defer func() { <-slots }()
			h(r)
		}()
	}
}
