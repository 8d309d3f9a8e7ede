package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

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

// readResults reads TOOLGATE_RESULTS completely from sequence from to the
// last message stored when it began, with an ordered consumer.
func readResults(ctx context.Context, js jetstream.JetStream, from uint64) ([]result, uint64, error) {
	st, err := js.Stream(ctx, streams.StreamResults)
	if err != nil {
		return nil, from, fmt.Errorf("chaos: stream %s: %w", streams.StreamResults, err)
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
			r.ResponseID = m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:]
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
