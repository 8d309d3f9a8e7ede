// Package streamstest holds fixtures of toolgate's streams for the tests
// of the packages that read them.
package streamstest

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/streams"
)

// Partition1Backlog applies set with the fairness lanes of tenants noisy
// and quiet in two partitions (it sets set.Fair), the durables of executor
// group erp (concurrency 4) in both, and stores a backlog in partition 1
// only: 2 of noisy's batch hops waiting at validate and 3 of quiet's
// interactive calls waiting for erp. It returns set as applied: a reader
// that reads partition 0 alone sees none of it.
func Partition1Backlog(ctx context.Context, t testing.TB, js jetstream.JetStream, set streams.Settings) streams.Settings {
	t.Helper()
	set.Fair = streams.Fair{Tenants: []string{"noisy", "quiet"}, Partitions: 2}
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}
	for p := range 2 {
		for _, c := range set.ExecuteGroupPartitionConsumers("erp", 4, p) {
			if _, err := js.CreateOrUpdateConsumer(ctx, c.Stream, set.Config(c)); err != nil {
				t.Fatal(err)
			}
		}
	}
	noisy, quiet := set.Fair.LaneIndex("noisy"), set.Fair.LaneIndex("quiet")
	for subj, n := range map[string]int{
		streams.PartitionGateLane(streams.Validate, streams.LaneToken(noisy, true), 1): 2,
		streams.PartitionExecuteSubject("erp", streams.LaneToken(quiet, false), 1):     3,
	} {
		for range n {
			if _, err := js.Publish(ctx, subj, []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
	}
	return set
}
