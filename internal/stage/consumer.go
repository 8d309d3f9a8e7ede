package stage

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/streams"
)

// withConsumer returns d as stage st's handlers see it: Settings.AckWait is
// the AckWait of st's consumer on the server, which is what redelivers its
// inputs, so execute's lease grace and repair's budget follow the consumer
// even when an admin applied it (--ensure=false) with other settings than
// this process's. A consumer changed later takes effect at the next start.
func withConsumer(ctx context.Context, d Deps, st string) (Deps, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cons, err := d.JS.Consumer(ctx, streams.StreamOf(st), st)
	if err != nil {
		return d, fmt.Errorf("stage: %s: consumer: %w", st, err)
	}
	if aw := cons.CachedInfo().Config.AckWait; aw > 0 {
		d.Settings.AckWait = aw
	}
	return d, nil
}

// accumulateOwner reads which inputs accumulate's lanes own, from their
// durables (streams.AccumulateOwner).
func accumulateOwner(d Deps) (*streams.AccumulateOwner, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := streams.ReadAccumulateOwner(ctx, d.JS, d.Settings)
	if err != nil {
		return nil, fmt.Errorf("stage: %w", err)
	}
	return o, nil
}
