package chaos

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/streams"
)

// spreadLeaders places toolgate's streams' leaders over the cluster's nodes
// after the streams are applied, as `toolgate streams apply` does in a
// deployment (streams.SpreadLeaders), and logs what it moved. A stream it
// could not move is logged, not fatal: the faults move leaders anyway.
func spreadLeaders(ctx context.Context, js jetstream.JetStream, logf func(string, ...any)) error {
	sctx, cancel := context.WithTimeout(ctx, streams.SpreadTimeout)
	defer cancel()
	moves, err := streams.SpreadLeaders(sctx, js)
	if err != nil {
		return fmt.Errorf("chaos: leaders: %w", err)
	}
	moved, astray := streams.Tally(moves)
	for _, m := range astray {
		logf("leader not placed: %s", m)
	}
	logf("leaders of %d streams placed over the nodes (%d moved)", len(moves), moved)
	return nil
}
