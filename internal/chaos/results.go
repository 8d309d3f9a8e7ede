package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// result is one message of the results stream.
type result struct {
	Seq        uint64
	ResponseID string // the subject's last token
	CallID     string `json:"call_id"`
	Status     string `json:"status"`
	Failure    string `json:"failure"`
	Data       []byte
}

// outcome is the status, or for a call that ended "failed" its failure
// class.
func (r result) outcome() string {
	if r.Status == "failed" && r.Failure != "" {
		return "failed:" + r.Failure
	}
	return r.Status
}

// key is the call id, or the response for a response-level result.
func (r result) key() string {
	if r.CallID != "" {
		return r.CallID
	}
	return "response:" + r.ResponseID
}

// cursor is where a reader of the results streams goes on: the next
// sequence to read in each, by name (absent: from the first).
type cursor map[string]uint64

// at is the next sequence to read in stream.
func (c cursor) at(stream string) uint64 { return max(c[stream], 1) }

// readResults reads every results stream (streams.ResultsStreams: every
// partition's) completely from cursor from to the last message stored
// when it began, with an ordered consumer each, and returns the cursor
// after it.
func readResults(ctx context.Context, js jetstream.JetStream, from cursor) ([]result, cursor, error) {
	refs, err := streams.ResultsStreams(ctx, js)
	if err != nil {
		return nil, from, fmt.Errorf("chaos: %w", err)
	}
	var out []result
	next := cursor{}
	for _, ref := range refs {
		rs, n, err := readResultsIn(ctx, js, ref.Name, from.at(ref.Name))
		if err != nil {
			return nil, from, err
		}
		out, next[ref.Name] = append(out, rs...), n
	}
	return out, next, nil
}

// readResultsIn reads one results stream completely from sequence from to
// the last message stored when it began.
func readResultsIn(ctx context.Context, js jetstream.JetStream, stream string, from uint64) ([]result, uint64, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, from, fmt.Errorf("chaos: stream %s: %w", stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, from, fmt.Errorf("chaos: %w", err)
	}
	last := info.State.LastSeq
	if last < from {
		return nil, from, nil
	}
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from,
	})
	if err != nil {
		return nil, from, fmt.Errorf("chaos: %w", err)
	}
	var out []result
	next := from
	for next <= last {
		batch, err := c.Fetch(1000, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, from, fmt.Errorf("chaos: read results: %w", err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				return nil, from, fmt.Errorf("chaos: %w", err)
			}
			r := result{Seq: md.Sequence.Stream, Data: m.Data()}
			r.ResponseID = wire.ResultsResponseID(m.Subject())
			if err := json.Unmarshal(m.Data(), &r); err != nil {
				return nil, from, fmt.Errorf("chaos: result seq %d is not JSON: %w", r.Seq, err)
			}
			if r.Seq > last {
				continue // stored after this read began: the next read has it
			}
			next = r.Seq + 1
			out = append(out, r)
		}
		if err := batch.Error(); err != nil {
			return nil, from, fmt.Errorf("chaos: read results: %w", err)
		}
		if got == 0 && next <= last {
			return nil, from, fmt.Errorf("chaos: read results: stopped at %d of %d", next, last)
		}
	}
	return out, next, nil
}
