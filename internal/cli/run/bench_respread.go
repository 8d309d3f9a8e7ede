package run

import (
	"context"
	"fmt"
	"io"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/benchrig"
	"github.com/toolgate/toolgate/streams"
)

// warmUpCalls is how many of the pipeline's calls a cluster bench sends
// before placing the leaders again: enough stores (7.6 per call) for the
// plan to weigh each stream by its traffic (streams' planTraffic).
func warmUpCalls(n int) int { return min(max(n/5, 200), 600) }

// respreadAfterWarmUp sends a warm-up of the pipeline's calls and places
// the streams' leaders again, as an operator does with `toolgate streams
// leaders --spread` once traffic flows: the plan made when the streams
// were applied, with nothing stored, counts streams; this one weighs each
// by what it stored, so the idle TOOLGATE_IN takes no node's place.
func respreadAfterWarmUp(ctx context.Context, w io.Writer, rig *benchrig.Rig, tenant string, n int) error {
	warm := warmUpCalls(n)
	if _, _, err := bench.LoadAs(ctx, rig.NC, rig.JS, tenant, "bench-warm-", warm, 0); err != nil {
		return fmt.Errorf("bench: warm-up: %w", err)
	}
	sctx, cancel := context.WithTimeout(ctx, streams.SpreadTimeout)
	moves, err := streams.SpreadLeaders(sctx, rig.JS)
	cancel()
	if err != nil {
		return fmt.Errorf("bench: leaders: %w", err)
	}
	moved, astray := streams.Tally(moves)
	for _, m := range astray {
		fmt.Fprintln(w, "leader not placed:", m)
	}
	fmt.Fprintf(w, "leaders placed again after a warm-up of %d calls, each stream weighed by what it stored (`toolgate streams leaders --spread` once traffic flows): %d moved\n", warm, moved)
	return nil
}
