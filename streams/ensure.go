package streams

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Ensure creates or updates every stream, bucket and stage consumer. It is
// idempotent: every service calls it at start, and `toolgate streams apply`
// calls it on demand.
func Ensure(ctx context.Context, js jetstream.JetStream, s Settings) error {
	for _, cfg := range s.StreamConfigs() {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("streams: stream %s: %w", cfg.Name, err)
		}
	}
	for _, cfg := range s.BucketConfigs() {
		if _, err := js.CreateOrUpdateKeyValue(ctx, cfg); err != nil {
			return fmt.Errorf("streams: bucket %s: %w", cfg.Bucket, err)
		}
	}
	for _, st := range Table() {
		for _, c := range s.StageConsumers(st) {
			if c.FromNow {
				if err := ensureFromNow(ctx, js, s, c); err != nil {
					return err
				}
				continue
			}
			if _, err := js.CreateOrUpdateConsumer(ctx, c.Stream, s.Config(c)); err != nil {
				return fmt.Errorf("streams: consumer %s: %w", c.Name, err)
			}
		}
	}
	return nil
}
