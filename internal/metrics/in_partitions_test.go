package metrics

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// With P = 3, what waits for accumulate in TOOLGATE_IN's partition streams
// (streams/in_partitions.go) counts: in its stage backlog, and in a listed
// tenant's lane backlog and batch part.
func TestAccumulate_backlog_counts_the_input_partitions(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Fair = streams.Fair{Tenants: []string{"noisy"}, Partitions: 3}
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{
		wire.InTenantStream("noisy", "r1") + ".1", wire.InTenantStream("noisy", "r2") + ".2", // noisy's lane
		wire.InTenantBatch("noisy") + ".2",           // its batch lane
		wire.InTenantStream("stranger", "r3") + ".1", // not listed: the main durable's
		streams.InStream("r4") + ".2",                // shared
	} {
		if _, err := js.Publish(ctx, subj, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	info := JetStreamInfo(js, streams.StreamOf)
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		ci, err := info(ctx, streams.Accumulate)
		if err != nil {
			return err
		}
		// the main durables' 5 in partitions 1 and 2, and the lanes' 3 there
		// (the main durable also counts a lane's input, which it passes over)
		if ci.NumPending != 8 {
			return fmt.Errorf("accumulate pending %d, want every partition's input", ci.NumPending)
		}
		return nil
	})
	read := JetStreamTenantLanes(js, nil)
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		ls, err := read(ctx)
		if err != nil {
			return err
		}
		if len(ls) != 1 || ls[0].Backlog != 3 || ls[0].Batch != 1 {
			return fmt.Errorf("lanes %+v, want noisy's backlog 3 (1 of them batch) from partitions 1 and 2", ls)
		}
		return nil
	})
}
