package chaos

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/streams"
)

// Start subscribes the executor on toolgate.exec.> (again, after Stop).
func (x *Executor) Start() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.sub != nil {
		return nil
	}
	sub, err := x.nc.Subscribe(streams.Exec(">"), func(m *nats.Msg) { go x.serve(m) })
	if err != nil {
		return fmt.Errorf("chaos: executor: %w", err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("chaos: executor: %w", err)
	}
	x.sub = sub
	return nil
}

// Stop takes the executor away as an executor group whose processes are
// all down: its interest leaves the subject, so execute's requests get no
// responders (not run, retried with backoff) and status queries go
// unanswered. Requests it holds are still answered, as a process stopped
// with a drain would.
func (x *Executor) Stop() {
	x.mu.Lock()
	sub := x.sub
	x.sub = nil
	x.mu.Unlock()
	if sub != nil {
		_ = sub.Unsubscribe()
	}
}
