package streams

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Ensure creates or updates every stream, bucket and stage consumer. It is
// idempotent: every service calls it at start, and `toolgate streams apply`
// calls it on demand.
func Ensure(ctx context.Context, js jetstream.JetStream, s Settings) error {
	// The P the ingest's subjects are mapped with, and the P before
	// (claimed_migration.go), kept on TOOLGATE_RESPONSES.
	now := time.Now()
	md, err := responsesMetadata(ctx, js, s, now)
	if err != nil {
		return err
	}
	l := ReadResponsesLayout(md)
	s.lowered = l.Partitions <= 1 && l.Previous > 1 && l.Migrating(now, s.responseIDTTL())
	for _, cfg := range s.StreamConfigs() {
		if cfg.Name == StreamResponses {
			cfg.Metadata = md
		}
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
		if st.Laned {
			if err := ensureLaneInputs(ctx, js, st); err != nil {
				return err
			}
		}
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
		for p := 1; p < s.Fair.PartitionCount(); p++ { // its durables in partitions 1 to P-1
			for _, c := range s.PartitionConsumers(st, p) {
				if c.FromNow {
					if err := ensureFromNow(ctx, js, s, c); err != nil {
						return err
					}
					continue
				}
				if _, err := js.CreateOrUpdateConsumer(ctx, c.Stream, s.Config(c)); err != nil {
					return fmt.Errorf("streams: consumer %s of %s: %w", c.Name, c.Stream, err)
				}
			}
		}
	}
	return nil
}

// ensureLaneInputs is the upgrade to the lanes' own streams (fair.go) of a
// laned stage st, before its durables are applied. Its lane durables of
// before, <stage>_<lane> in TOOLGATE_GATES on LegacyGateLane, are deleted:
// its main durable now reads those subjects, which a work queue allows only
// once no other durable's filter overlaps. A deleted durable's hops stay in
// the stream (a work queue deletes a hop when it is acknowledged), so the
// main durable takes them: once each, as any redelivery, a hop delivered
// to a process of before and not yet acknowledged included.
//
// A changed filter does not move a durable back (the server keeps where it
// is in the stream, which may be past an old lane hop), so when any hop
// waits on the old lanes the main durable is deleted too and created again
// below, from the stream's first hop; what it had delivered and not yet
// acknowledged is redelivered, as after an AckWait. Without such a hop its
// filter is widened in place: nothing is redelivered.
func ensureLaneInputs(ctx context.Context, js jetstream.JetStream, st Stage) error {
	gates, err := js.Stream(ctx, StreamGates)
	if err != nil {
		return fmt.Errorf("streams: stream %s: %w", StreamGates, err)
	}
	legacy := LegacyGateLane(st.Name, "*")
	l := gates.ListConsumers(ctx)
	var old []string
	for ci := range l.Info() {
		tok, ok := strings.CutPrefix(ci.Name, st.Name+"_")
		if ok && ci.Config.FilterSubject == LegacyGateLane(st.Name, tok) {
			old = append(old, ci.Name)
		}
	}
	if err := l.Err(); err != nil {
		return fmt.Errorf("streams: consumers of %s: %w", StreamGates, err)
	}
	for _, name := range old {
		if err := gates.DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("streams: old lane durable %s: %w", name, err)
		}
	}
	main, err := gates.Consumer(ctx, st.Consumer.Name)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil // created below, from the first hop
	}
	if err != nil {
		return fmt.Errorf("streams: consumer %s: %w", st.Consumer.Name, err)
	}
	ci := main.CachedInfo()
	if ci.Config.FilterSubject == "" && slices.Contains(ci.Config.FilterSubjects, legacy) {
		return nil // upgraded already
	}
	_, err = gates.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(legacy))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil // no old lane hop: widening the filter misses none
	}
	if err != nil {
		return fmt.Errorf("streams: old lane hops of %s: %w", st.Name, err)
	}
	if err := gates.DeleteConsumer(ctx, st.Consumer.Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("streams: consumer %s: %w", st.Consumer.Name, err)
	}
	return nil
}
