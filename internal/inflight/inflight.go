// Package inflight answers for a call in flight from the hop it waits in.
//
// No status record is written when a call enters the pipeline (issue 30,
// pipeline.WritesStatus): a call that has neither waited nor ended is known
// only by its hop, one message in a gate stream (TOOLGATE_GATES, a laned
// stage's TOOLGATE_GATE_<STAGE> for a call in a fairness lane, or
// TOOLGATE_GATE_EXECUTE for a call approved for its executor group). All
// are work queues, which delete a hop once its stage acked it, so what they
// hold is the calls in flight. Gate subjects name a stage and a lane, not a
// call, so a call is found by the call id header of each hop, read by
// sequence (STREAM.MSG.GET, next by subject: a work queue takes no second
// consumer on the stages' subjects); only the hop found is decoded. It
// costs a round trip per call in flight, at read time, and nothing per
// call: readers bound it with a limit.
package inflight

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"
)

// Streams are the streams a call in flight waits in, in the order a call
// passes them.
func Streams() []string {
	return append(append([]string{streams.StreamGates}, streams.LaneStreams()...), streams.StreamExecute)
}

// MaxScan is the most hops one read looks at, per stream.
const MaxScan = 20000

// Find is the status record of callID as its hop shows it, nil when no
// hop of it waits in the gate streams (among the first limit of each).
func Find(ctx context.Context, js jetstream.JetStream, callID string, limit int) (*pipeline.StatusRecord, error) {
	var found *pipeline.StatusRecord
	err := walk(ctx, js, limit, func(m *jetstream.RawStreamMsg) bool {
		if m.Header.Get(streams.HeaderCallID) != callID {
			return true
		}
		if r, ok := recordOf(m); ok {
			found = &r
			return false
		}
		return true
	})
	return found, err
}

// List is the status records of the calls in flight that pass keep (nil:
// all), in the order their hops were stored, at most limit hops read per
// stream.
func List(ctx context.Context, js jetstream.JetStream, limit int, keep func(pipeline.StatusRecord) bool) ([]pipeline.StatusRecord, error) {
	var out []pipeline.StatusRecord
	seen := map[string]bool{}
	err := walk(ctx, js, limit, func(m *jetstream.RawStreamMsg) bool {
		r, ok := recordOf(m)
		if ok && !seen[r.CallID] && (keep == nil || keep(r)) {
			seen[r.CallID] = true
			out = append(out, r)
		}
		return true
	})
	return out, err
}

// recordOf decodes one hop; ok is false for what is not a call's hop.
func recordOf(m *jetstream.RawStreamMsg) (pipeline.StatusRecord, bool) {
	e, err := call.Unmarshal(m.Data)
	if err != nil || e.CallID != m.Header.Get(streams.HeaderCallID) {
		return pipeline.StatusRecord{}, false
	}
	return pipeline.InFlightOf(e, m.Header.Get(streams.HeaderTool)), true
}

// walk hands visit each hop of Streams() and of every partition stream
// that exists (streams.AllPartitionStreams: whatever P, a call waits in its
// partition's), oldest first, until it returns false; a stream that does
// not exist (an older topology) is skipped.
func walk(ctx context.Context, js jetstream.JetStream, limit int, visit func(*jetstream.RawStreamMsg) bool) error {
	if limit <= 0 {
		limit = MaxScan
	}
	parts, err := streams.AllPartitionStreams(ctx, js)
	if err != nil {
		return fmt.Errorf("inflight: %w", err)
	}
	for _, name := range append(Streams(), parts...) {
		st, err := js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("inflight: stream %s: %w", name, err)
		}
		seq := max(st.CachedInfo().State.FirstSeq, 1)
		for range limit {
			m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(">"))
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				break
			}
			if err != nil {
				return fmt.Errorf("inflight: stream %s at %d: %w", name, seq, err)
			}
			if !visit(m) {
				return nil
			}
			seq = m.Sequence + 1
		}
	}
	return nil
}
