package chaos

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/streams"
)

// accepted is what the producer knows: the responses JetStream acked, and
// those it gave up on.
type accepted struct {
	mu     sync.Mutex
	kind   map[string]string    // response id -> bench.Mix kind
	at     map[string]time.Time // response id -> when its publish was acked
	refuse int                  // publishes never acked within the retry bound
}

// times returns a copy of when each response was accepted.
func (a *accepted) times() map[string]time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]time.Time, len(a.at))
	for k, v := range a.at {
		out[k] = v
	}
	return out
}

func (a *accepted) ids() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]string, len(a.kind))
	for k, v := range a.kind {
		out[k] = v
	}
	return out
}

// produce publishes n responses from bench.Mix at rate per second, as a
// producer would (half of them on a tenant's claimed subject, ingestSubject): each with Nats-Msg-Id = its response id, retried with the
// same id until JetStream acks it (de-duplication makes the retry safe) or
// retry has passed. A response counts as accepted once acked.
func produce(ctx context.Context, js jetstream.JetStream, prefix string, n int, rate float64, retry time.Duration, acc *accepted) {
	produceHeld(ctx, js, prefix, n, rate, retry, acc, nil)
}

// ChaosTenant is the tenant whose subjects carry every other response of
// the load (odd i): its claimed subject, the path pkg/producer takes for a
// tenant's whole responses, where the publish claims the response id
// (issue 30); and every fourth (i%4 == 3) its batch subject, which with
// P > 1 the servers map to its partition of TOOLGATE_IN (issue 37:
// streams.BatchPartition: 1 of 2, 2 of 3), so the faults hit that path too. The
// others go on the shared subject. Off the claimed subject accumulate
// claims the id by a claim message.
const ChaosTenant = "chaos"

// ingestSubject is where the load publishes response i, rid.
func ingestSubject(rid string, i int) string {
	switch i % 4 {
	case 1:
		return streams.InTenantClaimed(ChaosTenant, rid)
	case 3:
		return streams.InTenantBatch(ChaosTenant)
	}
	return streams.SubjectInResponse
}

// produceHeld is produce that, when held is not nil, publishes the last
// tenth of the responses only once held is closed: calls still flow after
// the last fault of a run.
func produceHeld(ctx context.Context, js jetstream.JetStream, prefix string, n int, rate float64, retry time.Duration, acc *accepted, held <-chan struct{}) {
	interval := time.Duration(float64(time.Second) / rate)
	mix := bench.Mix()
	start := time.Now()
	for i := range n {
		if held != nil && i == n-n/10 {
			select {
			case <-held:
			case <-ctx.Done():
				return
			}
			start = time.Now().Add(-time.Duration(i) * interval)
		}
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return
			}
		}
		k := mix[i%len(mix)]
		rid := prefix + strconv.Itoa(i)
		body := k.Body(rid, i)
		deadline := time.Now().Add(retry)
		for {
			m := nats.NewMsg(ingestSubject(rid, i))
			m.Data = body
			m.Header.Set(streams.HeaderProvider, k.Provider)
			m.Header.Set(streams.HeaderResponseID, rid)
			if k.Tolerant {
				m.Header.Set(streams.HeaderTolerant, "true")
			}
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := js.PublishMsg(pctx, m, jetstream.WithMsgID(rid))
			cancel()
			if err == nil {
				acc.mu.Lock()
				acc.kind[rid] = k.Name
				if acc.at == nil {
					acc.at = map[string]time.Time{}
				}
				acc.at[rid] = time.Now()
				acc.mu.Unlock()
				break
			}
			if ctx.Err() != nil {
				return
			}
			if time.Now().After(deadline) {
				acc.mu.Lock()
				acc.refuse++
				acc.mu.Unlock()
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
