package worker

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// progressKey carries the input being handled in the handler's context, so a
// handler whose work may outlive the consumer's AckWait can keep it alive
// without the worker handing out the message itself (only the worker acks).
type progressKey struct{}

type progress struct {
	jm         jetstream.Msg
	ackWait    time.Duration
	maxDeliver int
}

// withProgress is the handler context for one delivery of jm.
func withProgress(jm jetstream.Msg, ackWait time.Duration, maxDeliver int) context.Context {
	return context.WithValue(context.Background(), progressKey{}, progress{jm: jm, ackWait: ackWait, maxDeliver: maxDeliver})
}

// Deliveries returns how many times the input ctx's handler is working on
// has been delivered, this time included, and how many its consumer allows
// (0 or less: no bound); 0, 0 outside a worker's handler. A handler that
// holds an input back with Retry uses it to stop before the server stops
// delivering.
func Deliveries(ctx context.Context) (n uint64, maxDeliver int) {
	p, ok := ctx.Value(progressKey{}).(progress)
	if !ok || p.jm == nil {
		return 0, 0
	}
	md, err := p.jm.Metadata()
	if err != nil {
		return 0, p.maxDeliver
	}
	return md.NumDelivered, p.maxDeliver
}

// AckWait returns the AckWait of the consumer whose input ctx's handler is
// working on; 0 outside a worker's handler.
func AckWait(ctx context.Context) time.Duration {
	p, _ := ctx.Value(progressKey{}).(progress)
	return p.ackWait
}

// KeepAlive tells JetStream the input is still being worked on (Msg
// InProgress, which restarts its AckWait) every AckWait/2 until stop is
// called, so a long piece of work (a tool call whose timeout is near or
// beyond AckWait) is not redelivered while it runs. Bound the work itself
// (a context timeout): kept alive, a hung handler would never be
// redelivered. Outside a worker's handler it does nothing. stop waits for
// the keeper to end and may be called more than once.
func KeepAlive(ctx context.Context) (stop func()) {
	p, ok := ctx.Value(progressKey{}).(progress)
	if !ok || p.jm == nil || p.ackWait <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(p.ackWait / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = p.jm.InProgress() // a lost one costs at most a redelivery the claim then refuses
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
