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

// resultsTail is the last sequence of each results stream
// (streams.ResultsStreams), by name: a replay's outcomes are stored after
// it, in the partition of the call's response.
func resultsTail(ctx context.Context, js jetstream.JetStream) (map[string]uint64, error) {
	refs, err := streams.ResultsStreams(ctx, js)
	if err != nil {
		return nil, fmt.Errorf("dlq: %w", err)
	}
	tails := map[string]uint64{}
	for _, ref := range refs {
		st, err := js.Stream(ctx, ref.Name)
		if err != nil {
			return nil, fmt.Errorf("dlq: stream %s: %w", ref.Name, err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("dlq: %w", err)
		}
		tails[ref.Name] = info.State.LastSeq
	}
	return tails, nil
}

// result is what watch reads of a result message: a call's outcome, or a
// response-level one for input that yielded no call.
type result struct {
	CallID     string      `json:"call_id"`
	ResponseID string      `json:"response_id"`
	Status     call.Status `json:"status"`
	Failure    call.Status `json:"failure"`
}

// watch reads the results stored after from (each results stream's tail,
// resultsTail; a stream made since, from its first) until every replayed
// item has an outcome, o.Wait has passed, or ctx is done. A call's outcome is
// its first result after the replay; input counts its response's first
// result (one per call; a response-level one when it yielded no call).
func watch(ctx context.Context, js jetstream.JetStream, from map[string]uint64, plan []*planned, o Options) error {
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
	cs, err := tailConsumers(ctx, js, from)
	if err != nil {
		return err
	}
	statuses := call.Statuses()
	deadline := time.Now().Add(o.Wait)
	seen := 0
	for i := 0; seen < total; i++ {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return nil // the rest are still pending
		}
		batch, err := cs[i%len(cs)].Fetch(500, jetstream.FetchMaxWait(min(left, time.Second/time.Duration(len(cs)))))
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

// tailConsumers are ordered consumers of every results stream that exists,
// each from the first result after its tail in from.
func tailConsumers(ctx context.Context, js jetstream.JetStream, from map[string]uint64) ([]jetstream.Consumer, error) {
	refs, err := streams.ResultsStreams(ctx, js)
	if err != nil {
		return nil, fmt.Errorf("dlq: %w", err)
	}
	var cs []jetstream.Consumer
	for _, ref := range refs {
		st, err := js.Stream(ctx, ref.Name)
		if err != nil {
			return nil, fmt.Errorf("dlq: stream %s: %w", ref.Name, err)
		}
		c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{streams.ResultsAll()},
			DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
			OptStartSeq:    from[ref.Name] + 1,
		})
		if err != nil {
			return nil, fmt.Errorf("dlq: %w", err)
		}
		cs = append(cs, c)
	}
	return cs, nil
}
