package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// Kind is one sort of call in the load mix.
type Kind struct {
	Name     string
	Provider string
	Tolerant bool
	Body     func(rid string, i int) []byte
}

// Mix is the default load: mostly valid calls, plus invalid JSON,
// schema-invalid and text-recovered ones, from real provider formats. Every
// response yields exactly one result. Each call returns a fresh slice.
func Mix() []Kind {
	return []Kind{
		{Name: "valid", Provider: "openai-chat", Body: func(rid string, i int) []byte {
			return chat(rid, "create_invoice", fmt.Sprintf(`{"customer_id":"cus_%d","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":%d,"price_cents":4900}]}`, i, 1+i%5))
		}},
		{Name: "valid", Provider: "anthropic", Body: func(rid string, i int) []byte {
			return fmt.Appendf(nil, `{"id":%q,"type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"tool_use","id":"toolu_%d","name":"get_weather","input":{"city":"Paris %d"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":20}}`, rid, i, i)
		}},
		{Name: "invalid_json", Provider: "openai-chat", Body: func(rid string, i int) []byte {
			return chat(rid, "create_invoice", `{"customer_id": "cus_1", "currency": USD}`)
		}},
		{Name: "schema_invalid", Provider: "openai-chat", Body: func(rid string, i int) []byte {
			return chat(rid, "create_invoice", `{"customer_id":"cus_1","currency":"YEN","line_items":[]}`)
		}},
		{Name: "text_recovered", Provider: "ollama", Tolerant: true, Body: func(rid string, i int) []byte {
			return fmt.Appendf(nil, `{"model":"qwen2.5:7b","message":{"role":"assistant","content":"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo %d\"}}\n</tool_call>"},"done_reason":"stop","done":true}`, i)
		}},
	}
}

// chatMsg is an openai-chat response proposing tool(args) under response
// id rid, on subject, as a producer publishes it.
func chatMsg(subject, rid, tool, args string) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = chat(rid, tool, args)
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, rid)
	return m
}

func chat(rid, tool, args string) []byte {
	a, _ := json.Marshal(args)
	return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_%s","type":"function","function":{"name":%q,"arguments":%s}}]},"finish_reason":"tool_calls"}]}`, rid, rid, tool, a)
}

// Load pushes n responses from the mix through a running pipeline and
// measures each one from publish to its result. rate 0 publishes as fast as
// the client allows; otherwise responses are offered at rate per second.
// prefix makes response ids unique per run.
func Load(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, prefix string, n int, rate float64) (Stats, error) {
	st, _, err := LoadWithBreakdown(ctx, nc, js, prefix, n, rate)
	return st, err
}

// LoadWithBreakdown is Load that also returns the time each stage added.
func LoadWithBreakdown(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, prefix string, n int, rate float64) (Stats, *Breakdown, error) {
	return LoadAs(ctx, nc, js, "", prefix, n, rate)
}

// LoadAs is LoadWithBreakdown with the responses published by tenant, on
// its claimed subjects (wire.InTenantClaimed), as a tenant's producer does
// (pkg/producer: the publish is the response-id claim, issue 30): with a
// tenant list, what the fairness lanes cost per call (issue 37). tenant ""
// publishes on the shared subject (claimed by accumulate's claim message).
func LoadAs(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, tenant, prefix string, n int, rate float64) (Stats, *Breakdown, error) {
	bd := newBreakdown()
	st, err := load(ctx, nc, js, tenant, prefix, n, rate, bd)
	return st, bd, err
}

// Tenant is the tenant the bench's steps publish as when it is given no
// tenant list: a producer's whole responses on its claimed subjects.
const Tenant = "bench"

// inSubject is where tenant's response rid is published: its claimed
// subject, or the shared subject for no tenant.
func inSubject(tenant, rid string) string {
	if tenant == "" {
		return wire.SubjectInResponse
	}
	return wire.InTenantClaimed(tenant, rid)
}

func load(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, tenant, prefix string, n int, rate float64, bd *Breakdown) (Stats, error) {
	rec := newRecorder(n)
	sub, err := nc.Subscribe(streams.ResultsAll(), func(m *nats.Msg) {
		at := time.Now()
		rid := wire.ResultsResponseID(m.Subject) // toolgate.results.<tenant>.<rid>[.p<k>]
		if sent, ok := rec.arrived(rid, at); ok {
			bd.add(m.Data, sent, at)
		}
	})
	if err != nil {
		return Stats{}, err
	}
	defer sub.Unsubscribe()
	sub.SetPendingLimits(-1, -1)
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) / rate)
	}
	mix := Mix()
	var late []time.Duration
	if interval > 0 {
		late = make([]time.Duration, 0, n)
	}
	start := time.Now()
	for i := range n {
		if interval > 0 {
			due := start.Add(time.Duration(i) * interval)
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
			late = append(late, time.Since(due))
		}
		k := mix[i%len(mix)]
		rid := prefix + strconv.Itoa(i)
		m := nats.NewMsg(inSubject(tenant, rid))
		m.Data = k.Body(rid, i)
		m.Header.Set(streams.HeaderProvider, k.Provider)
		m.Header.Set(streams.HeaderResponseID, rid)
		if k.Tolerant {
			m.Header.Set(streams.HeaderTolerant, "true")
		}
		rec.sentAt(rid, time.Now())
		// A stall (the server's acks behind) is a pause, not a failed step.
		if err := publishAsync(ctx, js, m, rid); err != nil {
			return Stats{}, fmt.Errorf("bench: publish: %w", err)
		}
	}
	select {
	case <-rec.done:
	case <-time.After(10 * time.Minute):
		rec.mu.Lock()
		got := len(rec.lat)
		rec.mu.Unlock()
		return Stats{}, fmt.Errorf("bench: %d of %d results arrived", got, n)
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.dupes > 0 {
		return Stats{}, fmt.Errorf("bench: %d responses produced more than one result", rec.dupes)
	}
	return Stats{Name: "pipeline", Count: n, Elapsed: rec.last.Sub(start), Latencies: rec.lat, Late: late}, nil
}
