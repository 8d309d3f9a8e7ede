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

// storedResult is one message of TOOLGATE_RESULTS, as the soak reads it:
// whatever it holds, JSON or not.
type storedResult struct {
	Seq        uint64
	At         time.Time
	ResponseID string   // the subject's last token
	CallID     string   `json:"call_id"`
	Tool       string   `json:"tool"`
	Status     string   `json:"status"`
	Failure    string   `json:"failure"`
	Errors     []string `json:"errors"`
	Size       int
	NotJSON    bool
}

func (r storedResult) key() string {
	if r.CallID != "" {
		return r.CallID
	}
	return "response:" + r.ResponseID
}

func (r storedResult) outcome() string {
	if r.Status == "failed" && r.Failure != "" {
		return "failed:" + r.Failure
	}
	if r.Failure != "" && r.Failure != r.Status {
		return r.Status + ":" + r.Failure
	}
	return r.Status
}

// resultSet is TOOLGATE_RESULTS read so far, grown by readNew.
type resultSet struct {
	next  cursor
	all   []storedResult
	byRes map[string][]int // rid -> indexes into all
}

func (s *resultSet) byRID(rid string) []storedResult {
	var out []storedResult
	for _, i := range s.byRes[rid] {
		out = append(out, s.all[i])
	}
	return out
}

// readNew reads what was stored since the last call in every results
// stream (every partition's), up to the last message stored in each when
// it began.
func (s *resultSet) readNew(ctx context.Context, js jetstream.JetStream) error {
	if s.next == nil {
		s.next, s.byRes = cursor{}, map[string][]int{}
	}
	refs, err := streams.ResultsStreams(ctx, js)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	for _, ref := range refs {
		if err := s.readNewIn(ctx, js, ref.Name); err != nil {
			return err
		}
	}
	return nil
}

// readNewIn is readNew in one results stream.
func (s *resultSet) readNewIn(ctx context.Context, js jetstream.JetStream, stream string) error {
	next := s.next.at(stream)
	defer func() { s.next[stream] = next }()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("chaos: stream %s: %w", stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	last := info.State.LastSeq
	if last < next {
		return nil
	}
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: next,
	})
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	for next <= last {
		batch, err := c.Fetch(100, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return fmt.Errorf("chaos: read results: %w", err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("chaos: %w", err)
			}
			if md.Sequence.Stream > last {
				continue
			}
			r := storedResult{Seq: md.Sequence.Stream, At: md.Timestamp, Size: len(m.Data())}
			r.ResponseID = wire.ResultsResponseID(m.Subject())
			if json.Unmarshal(m.Data(), &r) != nil {
				r.NotJSON = true
			}
			next = r.Seq + 1
			s.byRes[r.ResponseID] = append(s.byRes[r.ResponseID], len(s.all))
			s.all = append(s.all, r)
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("chaos: read results: %w", err)
		}
		if got == 0 {
			// Messages past a gap (deleted or aged out) are skipped by the
			// consumer; the stream's first sequence may have moved on.
			return fmt.Errorf("chaos: read results: %s stopped at %d of %d", stream, next, last)
		}
	}
	return nil
}
