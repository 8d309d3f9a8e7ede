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

// watchShadow starts the policy stage's watch of the shadow revision (nil
// when this process runs no policy stage). With no shadow applied it costs
// the live calls nothing but an atomic load.
func watchShadow(ctx context.Context, cfg Config, js jetstream.JetStream, log zerolog.Logger) (*shadow.Comparer, error) {
	if !slices.Contains(cfg.Stages, streams.Policy) {
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
