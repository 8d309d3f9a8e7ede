package metrics

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
	"github.com/toolgate/toolgate/streams/streamstest"
)

// With P = 2, calls waiting in partition 1 only show in every reader of
// the gate streams: the executor group's queue, the listed tenants' lanes
// (backlog and oldest) and each stage's oldest pending (a laned gate stage
// and execute). Each read partition 0 only before.
func TestReaders_count_a_backlog_in_partition_1(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	before := time.Now().Add(-time.Second)
	set = streamstest.Partition1Backlog(ctx, t, js, set)
	noisy, quiet := set.Fair.LaneIndex("noisy"), set.Fair.LaneIndex("quiet")

	t.Run("executor groups", func(t *testing.T) {
		groups := JetStreamExecutorGroups(js)
		testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
			gs, err := groups(ctx)
			if err != nil {
				return err
			}
			if len(gs) != 1 || gs[0].Group != "erp" || gs[0].Queue != 3 || gs[0].Concurrency != 4 {
				return fmt.Errorf("groups %+v, want erp with 3 queued (partition 1), concurrency 4", gs)
			}
			return nil
		})
	})
	t.Run("tenant lanes", func(t *testing.T) {
		lanes := JetStreamTenantLanes(js, nil)
		testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
			ls, err := lanes(ctx)
			if err != nil {
				return err
			}
			got := map[int]TenantLane{}
			for _, l := range ls {
				got[l.Lane] = l
			}
			if l := got[noisy]; l.Backlog != 2 || l.Batch != 2 || l.Oldest.Before(before) {
				return fmt.Errorf("noisy's lane %+v, want backlog 2, batch 2, an oldest", l)
			}
			if l := got[quiet]; l.Backlog != 3 || l.Batch != 0 || l.Oldest.Before(before) {
				return fmt.Errorf("quiet's lane %+v, want backlog 3, an oldest", l)
			}
			return nil
		})
	})
	t.Run("oldest pending", func(t *testing.T) {
		info, first := JetStreamInfo(js, streams.StreamOf), JetStreamFirstPending(js, streams.StreamOf)
		for _, stage := range []string{streams.Validate, streams.Execute} {
			testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
				ci, err := info(ctx, stage)
				if err != nil {
					return err
				}
				at, err := first(ctx, stage, ci)
				if err != nil {
					return err
				}
				if at.Before(before) {
					return fmt.Errorf("%s: oldest pending %v (pending %d), want one stored since the test began", stage, at, ci.NumPending)
				}
				return nil
			})
		}
	})
}
