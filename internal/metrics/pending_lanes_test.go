package metrics

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// A laned stage's backlog and oldest waiting input, read from a real
// server, count its lanes in its own lanes' stream (TOOLGATE_GATE_<STAGE>)
// and the hops on its old lane subjects in TOOLGATE_GATES, which its main
// durable reads: the oldest is the first stored, wherever it waits.
func TestConsumerInfo_of_a_laned_stage_counts_its_lanes_stream_and_old_lanes(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Fair = streams.Fair{Tenants: []string{"noisy", "quiet"}}
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}
	first, err := js.Publish(ctx, streams.GateLane(streams.Parse, "1i"), []byte("oldest"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a later stored time for the rest
	for _, subj := range []string{streams.GateLane(streams.Parse, "0b"), streams.LegacyGateLane(streams.Parse, "3i"), streams.Gate(streams.Parse)} {
		if _, err := js.Publish(ctx, subj, []byte("hop")); err != nil {
			t.Fatal(err)
		}
	}
	st, err := js.Stream(ctx, streams.LaneStream(streams.Parse))
	if err != nil {
		t.Fatal(err)
	}
	oldest, err := st.GetMsg(ctx, first.Sequence)
	if err != nil {
		t.Fatal(err)
	}
	info := JetStreamInfo(js, streams.StreamOf)
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		ci, err := info(ctx, streams.Parse)
		if err != nil {
			return err
		}
		if ci.NumPending != 4 {
			return fmt.Errorf("parse pending %d, want 4 (two lanes, an old lane, its own subject)", ci.NumPending)
		}
		at, err := JetStreamFirstPending(js, streams.StreamOf)(ctx, streams.Parse, ci)
		if err != nil {
			return err
		}
		if !at.Equal(oldest.Time) {
			return fmt.Errorf("oldest waiting %v, want the lane hop stored first, %v", at, oldest.Time)
		}
		return nil
	})
}

// With partitions, a stage's backlog counts what waits in each partition
// stream that exists, lanes and its main durable's subject, and execute's
// partitions' calls.
func TestConsumerInfo_counts_every_partition(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Fair = streams.Fair{Lanes: 2, Partitions: 3}
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{
		streams.GateLane(streams.Parse, "1i"), streams.PartitionGateLane(streams.Parse, "0b", 1),
		streams.PartitionGate(streams.Parse, 2), streams.PartitionGateLane(streams.Parse, "1i", 2),
		streams.PartitionExecuteSubject("example", "0i", 2),
	} {
		if _, err := js.Publish(ctx, subj, []byte("hop")); err != nil {
			t.Fatal(err)
		}
	}
	info := JetStreamInfo(js, streams.StreamOf)
	for stage, want := range map[string]uint64{streams.Parse: 4, streams.Execute: 1} {
		testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
			ci, err := info(ctx, stage)
			if err != nil {
				return err
			}
			if ci.NumPending != want {
				return fmt.Errorf("%s pending %d, want %d", stage, ci.NumPending, want)
			}
			return nil
		})
	}
}
