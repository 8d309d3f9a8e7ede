package dlq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// resultsTail is the last sequence of the results stream: a replay's
// outcomes are stored after it.
func resultsTail(ctx context.Context, js jetstream.JetStream) (uint64, error) {
	st, err := js.Stream(ctx, streams.StreamResults)
	if err != nil {
		return 0, fmt.Errorf("dlq: stream %s: %w", streams.StreamResults, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("dlq: %w", err)
	}
	return info.State.LastSeq, nil
}

// result is what watch reads of a result message: a call's outcome, or a
// response-level one for input that yielded no call.
type result struct {
	CallID     string      `json:"call_id"`
	ResponseID string      `json:"response_id"`
	Status     call.Status `json:"status"`
	Failure    call.Status `json:"failure"`
}

// watch reads the results stored after sequence from until every replayed
// item has an outcome, o.Wait has passed, or ctx is done. A call's outcome is
// its first result after the replay; input counts its response's first
// result (one per call; a response-level one when it yielded no call).
func watch(ctx context.Context, js jetstream.JetStream, from uint64, plan []*planned, o Options) error {
	byKey := map[string]*planned{}
	total := 0
	for _, p := range plan {
		if p.skip == "" {
			byKey[p.key] = p
			total++
		}
	}
	if total == 0 {
		return nil
	}
	st, err := js.Stream(ctx, streams.StreamResults)
	if err != nil {
		return fmt.Errorf("dlq: stream %s: %w", streams.StreamResults, err)
	}
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{streams.ResultsAll()},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from + 1,
	})
	if err != nil {
		return fmt.Errorf("dlq: %w", err)
	}
	statuses := call.Statuses()
	deadline := time.Now().Add(o.Wait)
	seen := 0
	for seen < total {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return nil // the rest are still pending
		}
		batch, err := c.Fetch(500, jetstream.FetchMaxWait(min(left, time.Second)))
		if transient(err) {
			time.Sleep(min(left, 100*time.Millisecond)) // a cluster electing a leader: ask again until the deadline
			continue
		}
		if err != nil {
			return fmt.Errorf("dlq: watch results: %w", err)
		}
		for m := range batch.Messages() {
			var r result
			if json.Unmarshal(m.Data(), &r) != nil || !slices.Contains(statuses, r.Status) {
				continue // not an outcome toolgate publishes
			}
			p := byKey[r.CallID]
			if p == nil {
				p = byKey["input:"+r.ResponseID]
			}
			if p == nil || p.outcome != "" {
				continue
			}
			p.outcome = r.Status
			if r.Status == call.Failed && r.Failure != "" {
				p.outcome = r.Failure // the class says more than "failed"
			}
			seen++
			if o.Progress != nil {
				o.Progress("wait", seen, total)
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) && !transient(err) {
			return fmt.Errorf("dlq: watch results: %w", err)
		}
	}
	return nil
}

// transient reports whether err is one a NATS cluster gives while a node
// restarts or a leader is elected (no responders to the consumer's request,
// missed heartbeats, a request timing out): the watch asks again until its
// deadline instead of failing the replay it reports on.
func transient(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoHeartbeat) || errors.Is(err, nats.ErrTimeout)
}
