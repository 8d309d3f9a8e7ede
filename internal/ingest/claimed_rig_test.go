package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/natsmap/embedded"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/streams"
)

// claimedDedup is the rig's duplicate window: short, so a retry after it
// is a test of the claimed subject's own refusal.
const claimedDedup = 200 * time.Millisecond

// claimedRig is a streamRig whose accumulate reads TOOLGATE_IN and
// TOOLGATE_RESPONSES as the stage does (streams.Settings.LaneGroups), with
// accumulate's seal key, so its claim messages carry a tag.
func claimedRig(t *testing.T) (*streamRig, *Accumulate) {
	t.Helper()
	return claimedRigP(t, 1)
}

// claimedRigP is claimedRig with the streams applied at P = p and the
// server mapping the claimed subjects to p partitions; accumulate reads
// every claimed partition stream that exists, as the stage does, looking
// again every 100 ms.
func claimedRigP(t *testing.T, p int) (*streamRig, *Accumulate) {
	t.Helper()
	r := newStreamRigWith(t, func(s *streams.Settings) {
		s.AckWait, s.DedupWindow, s.Fair.Partitions = 5*time.Second, claimedDedup, p
	})
	if err := embedded.Apply(r.srv, p); err != nil {
		t.Fatal(err)
	}
	kr, err := seal.Ephemeral([]string{streams.Accumulate})
	if err != nil {
		t.Fatal(err)
	}
	a := gate(r.js, time.Hour)
	a.Emit, a.Partitions = &pipeline.Emitter{Seals: kr}, p
	acc, _ := streams.Lookup(streams.Accumulate)
	var shares []worker.Share
	for _, g := range streams.DefaultSettings().LaneGroups(acc) {
		shares = append(shares, worker.Share{Stream: g.Stream, Durables: g.Durables, Streams: g.Streams, Weight: g.Weight, Floor: g.Floor})
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var cur atomic.Pointer[Accumulate] // a test may swap in a changed gate (a fix)
	cur.Store(a)
	r.swap = cur.Store
	h := func(ctx context.Context, m worker.Msg) ([]worker.Output, error) { return cur.Load().Handle(ctx, m) }
	parts := func(ctx context.Context) ([]string, error) { return streams.IngestPartitionNames(ctx, r.js) }
	wk, err := worker.New(r.js, worker.Config{Stage: streams.Accumulate, Stream: streams.StreamIn, Batch: 10, Shares: shares, Key: Key,
		Concurrency: 4, DeadLetter: a.Emit.DeadLetter(streams.Accumulate, time.Now),
		Parts: parts, Resync: 100 * time.Millisecond, PartOf: streams.IngestPartOf}, h)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = wk.Run(ctx) }()
	testenv.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if !wk.Ready() {
			return errors.New("accumulate not consuming")
		}
		return nil
	})
	return r, a
}

// producerOf is tenant's producer on the rig's connection.
func (r *streamRig) producerOf(tenant string) *producer.Producer {
	return producer.New(r.js).ForTenant(tenant)
}

// weather is a producer's Meta for an openai-chat response rid.
func weather(rid string) producer.Meta {
	return producer.Meta{Provider: "openai-chat", ResponseID: rid}
}

func weatherIn(city string) []byte { return fmt.Appendf(nil, weatherBody, city) }

// settledAll waits until both of accumulate's main durables have acked
// everything.
func (r *streamRig) settledAll(t *testing.T) {
	t.Helper()
	testenv.Eventually(t, 45*time.Second, 10*time.Millisecond, func() error {
		ins, err := streams.AllInStreams(context.Background(), r.js)
		if err != nil {
			return err
		}
		for _, name := range ins {
			if err := testenv.ConsumerIdle(context.Background(), r.js, name, streams.Accumulate); err != nil {
				return err
			}
		}
		names, err := streams.AllResponsesStreams(context.Background(), r.js)
		if err != nil {
			return err
		}
		for _, name := range names {
			if err := testenv.ConsumerIdle(context.Background(), r.js, name, streams.AccumulateClaimed); err != nil {
				return err
			}
		}
		return nil
	})
}

// parsedKey waits for n envelopes of response rid at parse and returns
// them; the caller checks no more come once settled.
func (r *streamRig) parsedN(t *testing.T, rid string, n int) []call.Envelope {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := len(r.parsedFor(rid)); got < n {
			return fmt.Errorf("%d envelopes of %s at parse, want %d", got, rid, n)
		}
		return nil
	})
	return r.parsedFor(rid)
}

// msgs is how many messages stream holds.
func (r *streamRig) msgs(t *testing.T, stream string) uint64 {
	t.Helper()
	st, err := r.js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	return st.CachedInfo().State.Msgs
}

// statusCount counts the results of rid with status st.
func (r *streamRig) statusCount(rid string, st call.Status) int {
	n := 0
	for _, res := range r.resultsFor(rid) {
		if res.Status == st {
			n++
		}
	}
	return n
}
