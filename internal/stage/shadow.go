package stage

import (
	"context"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/shadow"
	"github.com/toolgate/toolgate/streams"
)

// watchShadow starts the watch of the shadow revision of a process that
// runs the validate, business or policy stage (nil otherwise): the three
// compare the calls they stop or decide. With no shadow applied it costs
// the live calls nothing but an atomic load.
func watchShadow(ctx context.Context, cfg Config, js jetstream.JetStream, log zerolog.Logger) (*shadow.Comparer, error) {
	if !slices.ContainsFunc(cfg.Stages, shadowed) {
		return nil, nil
	}
	shadows, err := js.KeyValue(ctx, streams.BucketToolsShadow)
	if err != nil {
		return nil, fmt.Errorf("stage: bucket %s: %w%s", streams.BucketToolsShadow, err, applyHint(cfg))
	}
	reports, err := js.KeyValue(ctx, streams.BucketShadowReport)
	if err != nil {
		return nil, fmt.Errorf("stage: bucket %s: %w%s", streams.BucketShadowReport, err, applyHint(cfg))
	}
	return shadow.Watch(ctx, shadows, reports, log, nil)
}

// shadowed reports whether stage compares calls with the shadow.
func shadowed(stage string) bool {
	return stage == streams.Validate || stage == streams.Business || stage == streams.Policy
}

// shadowed is gate h compared with the shadow, and the loop that writes the
// counts (one per process, however many of its stages start it); h as it
// is without a comparer.
func (d Deps) shadowed(h shadow.Gate) (shadow.Gate, []func(context.Context)) {
	if d.Shadow == nil {
		return h, nil
	}
	return d.Shadow.Wrap(h), []func(context.Context){func(ctx context.Context) { d.Shadow.Run(ctx, d.ShadowFlush) }}
}
