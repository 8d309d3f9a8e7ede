package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/streams"
)

// Scenario is one point of the cost curve: Count responses of one shape,
// each making CallsPer valid calls, pushed as fast as the client allows.
type Scenario struct {
	Name     string
	About    string
	Count    int // responses in a default run (each scenario about 5 s on 2 cores)
	CallsPer int
	// PerKiB: the cost per KiB of provider output is a figure of this
	// scenario (the bytes grow, not the calls).
	PerKiB bool
	// publish sends response i under rid asynchronously and returns the
	// bytes of provider output it carried.
	publish func(js jetstream.JetStream, rid string, i int) (int, error)
}

// Scenarios are the cost-curve scenarios, in the order they run.
func Scenarios() []Scenario {
	whole := func(body func(rid string, i int) []byte) func(jetstream.JetStream, string, int) (int, error) {
		return func(js jetstream.JetStream, rid string, i int) (int, error) {
			m := nats.NewMsg(streams.SubjectInResponse)
			m.Data = body(rid, i)
			m.Header.Set(streams.HeaderProvider, "openai-chat")
			m.Header.Set(streams.HeaderResponseID, rid)
			return len(m.Data), publishAsync(context.Background(), js, m, rid)
		}
	}
	large := func(size int) func(jetstream.JetStream, string, int) (int, error) {
		return whole(func(rid string, i int) []byte { return chatCalls(rid, DocumentTool, []string{documentArgs(i, size)}) })
	}
	return []Scenario{
		{Name: "args-16k", About: "one call with 16 KiB of arguments (create_invoice's plus a document string)", Count: 1000, CallsPer: 1, PerKiB: true, publish: large(16 << 10)},
		{Name: "args-256k", About: "one call with 256 KiB of arguments (create_invoice's plus a document string)", Count: 100, CallsPer: 1, PerKiB: true, publish: large(256 << 10)},
		{Name: "parallel-8", About: "one OpenAI chat response with 8 parallel create_invoice calls", Count: 500, CallsPer: 8, publish: whole(func(rid string, i int) []byte {
			args := make([]string, 8)
			for k := range args {
				args[k] = fmt.Sprintf(`{"customer_id":"cus_%d","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":%d,"price_cents":4900}]}`, i, 1+k)
			}
			return chatCalls(rid, "create_invoice", args)
		})},
		{Name: "invoice-1", About: "one OpenAI chat create_invoice call, under no limit (the baseline of limits-2)", Count: 2000, CallsPer: 1, publish: whole(func(rid string, i int) []byte {
			return chatCalls(rid, "create_invoice", []string{limitedArgs(i)})
		})},
		{Name: "limits-2", About: "the same call to " + LimitedTool + ", under one count and one weight limit (docs/limits.md)", Count: 2000, CallsPer: 1, publish: whole(func(rid string, i int) []byte {
			return chatCalls(rid, LimitedTool, []string{limitedArgs(i)})
		})},
		{Name: "stream-500", About: "one OpenAI chat stream of 500 events making one create_invoice call", Count: 80, CallsPer: 1, PerKiB: true, publish: publishStream(500)},
	}
}

// limitedArgs are the arguments of invoice-1 and limits-2: 100 customers.
func limitedArgs(i int) string {
	return fmt.Sprintf(`{"customer_id":"cus_%d","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":%d,"price_cents":4900}]}`, i%100, 1+i%5)
}

// publishStream publishes a chat stream of events events as a producer
// does (pkg/producer PublishStream): Toolgate-Seq 1..n, message id <rid>:<seq>.
func publishStream(events int) func(jetstream.JetStream, string, int) (int, error) {
	return func(js jetstream.JetStream, rid string, i int) (int, error) {
		bytes := 0
		for s, ev := range chatStream(rid, i, events) {
			m := nats.NewMsg(streams.InStream(rid))
			m.Data = ev
			m.Header.Set(streams.HeaderProvider, "openai-chat")
			m.Header.Set(streams.HeaderResponseID, rid)
			m.Header.Set(streams.HeaderSeq, strconv.Itoa(s+1))
			if err := publishAsync(context.Background(), js, m, rid+":"+strconv.Itoa(s+1)); err != nil {
				return bytes, err
			}
			bytes += len(ev)
		}
		return bytes, nil
	}
}

// Cost is what one scenario run cost. CPU is this process (load
// generator, embedded NATS and every stage) plus redis-server, as the
// pipeline step measures it; NATSBytes is what every client sent the
// server (each hop, store, status, audit and result write, the executor's
// request and answer).
type Cost struct {
	Name         string        `json:"name"`
	About        string        `json:"about"`
	Responses    int           `json:"responses"`
	Calls        int           `json:"calls"`
	Elapsed      time.Duration `json:"elapsed_ns"`
	CallsPerSec  float64       `json:"calls_per_s"`
	P50          time.Duration `json:"p50_ns"`
	P99          time.Duration `json:"p99_ns"`
	CPUPerCall   time.Duration `json:"cpu_per_call_ns"`
	BodyPerCall  float64       `json:"provider_bytes_per_call"`
	NATSPerCall  float64       `json:"nats_bytes_per_call"`
	PerKiB       bool          `json:"per_kib_matters"`
	CPUPerKiB    time.Duration `json:"cpu_per_provider_kib_ns"`
	NATSPerBytes float64       `json:"nats_bytes_per_provider_byte"`
}

// Run pushes count responses of s (0: s.Count) through r and waits for
// every call's result, which must arrive exactly once and be ok.
func (s Scenario) Run(ctx context.Context, r Target, prefix string, count int) (Cost, error) {
	if count <= 0 {
		count = s.Count
	}
	calls := count * s.CallsPer
	rec := newRecorder(calls)
	bad := make(chan string, 1)
	sub, err := r.NC.Subscribe(streams.ResultsAll(), func(m *nats.Msg) {
		var res struct {
			ProviderCallID string   `json:"provider_call_id"`
			ResponseID     string   `json:"response_id"`
			OK             bool     `json:"ok"`
			Status         string   `json:"status"`
			Errors         []string `json:"errors"`
		}
		if json.Unmarshal(m.Data, &res) != nil {
			return
		}
		if _, ok := rec.arrived(res.ProviderCallID, time.Now()); ok && !res.OK {
			select {
			case bad <- fmt.Sprintf("call %s of %s ended %s: %s", res.ProviderCallID, res.ResponseID, res.Status, strings.Join(res.Errors, "; ")):
			default:
			}
		}
	})
	if err != nil {
		return Cost{}, err
	}
	defer sub.Unsubscribe()
	sub.SetPendingLimits(-1, -1)
	rids := make([]string, count)
	for i := range rids {
		rids[i] = prefix + s.Name + "-" + strconv.Itoa(i)
	}
	v0, err := r.varz(ctx)
	if err != nil {
		return Cost{}, err
	}
	u0 := r.CPU()
	start := time.Now()
	body := 0
	for i, rid := range rids {
		// Latency is from the response's first message leaving the generator.
		now := time.Now()
		for k := range s.CallsPer {
			rec.sentAt(callID(rid, k), now)
		}
		n, err := s.publish(r.JS, rid, i)
		if err != nil {
			return Cost{}, fmt.Errorf("bench: %s: publish: %w", s.Name, err)
		}
		body += n
	}
	select {
	case <-rec.done:
	case why := <-bad:
		return Cost{}, fmt.Errorf("bench: %s: %s", s.Name, why)
	case <-time.After(3 * time.Minute):
		got, _, _ := rec.counts()
		return Cost{}, fmt.Errorf("bench: %s: %d of %d results arrived", s.Name, got, calls)
	case <-ctx.Done():
		return Cost{}, ctx.Err()
	}
	cpu := r.CPU() - u0
	v1, err := r.varz(ctx)
	if err != nil {
		return Cost{}, err
	}
	select {
	case why := <-bad:
		return Cost{}, fmt.Errorf("bench: %s: %s", s.Name, why)
	default:
	}
	if err := sub.Drain(); err != nil {
		return Cost{}, err
	}
	if _, dupes, _ := rec.counts(); dupes > 0 {
		return Cost{}, fmt.Errorf("bench: %s: %d calls produced more than one result", s.Name, dupes)
	}
	rec.mu.Lock()
	st := Stats{Name: s.Name, Count: calls, Elapsed: rec.last.Sub(start), Latencies: rec.lat}
	rec.mu.Unlock()
	c := Cost{Name: s.Name, About: s.About, PerKiB: s.PerKiB, Responses: count, Calls: calls, Elapsed: st.Elapsed, CallsPerSec: st.Rate(),
		P50: st.Percentile(50), P99: st.Percentile(99), CPUPerCall: cpu / time.Duration(calls),
		BodyPerCall: float64(body) / float64(calls), NATSPerCall: float64(v1.InBytes-v0.InBytes) / float64(calls)}
	if c.BodyPerCall > 0 {
		c.CPUPerKiB = time.Duration(float64(c.CPUPerCall) * 1024 / c.BodyPerCall)
		c.NATSPerBytes = c.NATSPerCall / c.BodyPerCall
	}
	return c, nil
}
