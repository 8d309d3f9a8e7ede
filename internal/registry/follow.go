package registry

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// Follow hands apply every entry w delivers, one at a time in a goroutine
// of its own, and returns once the values w started with are applied
// (ctx's error if ctx ends first). The goroutine stops w when ctx is done
// or w closes. The registry follows the tools bucket with it, the shadow
// comparer its revision.
func Follow(ctx context.Context, w jetstream.KeyWatcher, apply func(jetstream.KeyValueEntry)) error {
	initial := make(chan struct{})
	go func() {
		defer w.Stop()
		loaded := false
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil { // end of the initial values
					if !loaded {
						loaded = true
						close(initial)
					}
					continue
				}
				apply(e)
			}
		}
	}()
	select {
	case <-initial:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
