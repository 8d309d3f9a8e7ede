package stage

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// bulkheadTools: erp_invoice runs in group erp with two calls at a time;
// get_weather in a group of its own (the default).
const bulkheadTools = `
tools:
  - name: erp_invoice
    input_schema: {type: object, properties: {n: {type: integer}}, required: [n]}
    executor: {group: erp, concurrency: 2, timeout: 5m}
    policy: {risk: read}
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string}}, required: [city]}
    policy: {risk: read}
`

// A group whose executor never answers holds only its own slots: with more
// blocked erp calls than the old shared pool had goroutines (16), every
// weather call still completes, and erp never runs more than its
// concurrency at once. Without the bulkheads (one execute pool for all
// tools) the weather calls wait behind the blocked ones and never finish.
func TestBulkhead_a_blocked_group_does_not_hold_up_another(t *testing.T) {
	release := make(chan struct{})
	var inFlight, peak atomic.Int32
	p := startRig(t, rig{files: map[string][]byte{"tools.yaml": []byte(bulkheadTools)}, serve: []string{"get_weather"}})
	// erp's executor takes every request at once, each in its own
	// goroutine, and answers none until released: what it runs at once is
	// what toolgate sends at once.
	serveRaw(t, p.nc, "erp_invoice", func() {
		n := inFlight.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
	})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	const blocked = 24
	for i := range blocked {
		rid := fmt.Sprintf("resp-erp-%d", i)
		p.publish(rid, "openai-chat", chat(rid, "erp_invoice", fmt.Sprintf(`{"n":%d}`, i), "tool_calls"))
	}
	testenv.Eventually(t, 20*time.Second, 20*time.Millisecond, func() error {
		if n := peak.Load(); n < 2 {
			return fmt.Errorf("erp runs %d calls, want its concurrency 2", n)
		}
		return nil
	})
	for i := range 20 {
		rid := fmt.Sprintf("resp-weather-%d", i)
		p.publish(rid, "openai-chat", chat(rid, "get_weather", `{"city":"Oslo"}`, "tool_calls"))
	}
	for i := range 20 {
		rs := p.waitResults(fmt.Sprintf("resp-weather-%d", i), 1)
		if rs[0]["status"] != "executed" {
			t.Fatalf("weather call %d: %v, want executed", i, rs[0])
		}
	}
	if n := peak.Load(); n != 2 {
		t.Fatalf("erp ran %d calls at once, want its concurrency 2", n)
	}
	info, err := p.js.Consumer(context.Background(), streams.StreamExecute, streams.ExecuteDurable("erp"))
	if err != nil {
		t.Fatal(err)
	}
	if got := info.CachedInfo().Config.MaxAckPending; got != 2 {
		t.Fatalf("erp's durable MaxAckPending %d, want 2", got)
	}
	// The blocked calls run once each when their executor answers.
	once.Do(func() { close(release) })
	for i := range blocked {
		rs := p.waitResults(fmt.Sprintf("resp-erp-%d", i), 1)
		if rs[0]["status"] != "executed" {
			t.Fatalf("erp call %d: %v, want executed", i, rs[0])
		}
	}
}

// serveRaw answers every request on tool's subject in a goroutine of its
// own, after run returns: {"ok": true}. It checks no signature.
func serveRaw(t *testing.T, nc *nats.Conn, tool string, run func()) *nats.Subscription {
	t.Helper()
	sub, err := nc.Subscribe(streams.Exec(tool), func(m *nats.Msg) {
		go func() {
			if m.Header.Get(execute.HeaderQuery) != "" {
				_ = m.Respond([]byte(`{"known":false}`))
				return
			}
			run()
			_ = m.Respond([]byte(`{"ok":true,"result":{"done":true}}`))
		}()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return sub
}

// A group whose executor is gone opens its circuit: its durable is paused
// (calls wait in the stream, none pending) with one delivery allowed for
// the probe. When the executor comes back the probe closes it and every
// waiting call runs exactly once; another group never noticed.
func TestBulkhead_a_dead_group_opens_its_circuit_and_every_waiting_call_runs_once(t *testing.T) {
	m := metrics.New()
	p := startRig(t, rig{
		files: map[string][]byte{"tools.yaml": []byte(bulkheadTools)}, serve: []string{"get_weather"},
		configure: func(c *Config) {
			c.Circuit = Circuit{Failures: 3, Window: time.Minute, Cooldown: time.Second}
			c.Metrics = m
		},
	})
	const calls = 30
	for i := range calls {
		rid := fmt.Sprintf("resp-dead-%d", i)
		p.publish(rid, "openai-chat", chat(rid, "erp_invoice", fmt.Sprintf(`{"n":%d}`, i), "tool_calls"))
	}
	ctx := context.Background()
	testenv.Eventually(t, 20*time.Second, 20*time.Millisecond, func() error {
		c, err := p.js.Consumer(ctx, streams.StreamExecute, streams.ExecuteDurable("erp"))
		if err != nil {
			return err
		}
		info, err := c.Info(ctx)
		if err != nil {
			return err
		}
		if info.Config.MaxAckPending != 1 || !info.Paused {
			return fmt.Errorf("erp's durable: MaxAckPending %d, paused %v: want its circuit open", info.Config.MaxAckPending, info.Paused)
		}
		// Retries wait as scheduled messages, not as pending deliveries.
		if info.NumAckPending != 0 {
			return fmt.Errorf("erp's durable holds %d pending calls while open, want none", info.NumAckPending)
		}
		return nil
	})
	// Seen (metrics): the open circuit and the breaker's transition to it.
	// The durable may reach its half-open moment (the 1 s cool-down ended)
	// before the scrape: open or half-open, never closed.
	open := scrapeMetrics(t, m)
	if err := has(t, open, `toolgate_executor_circuit_state{group="erp"}`, func(v float64) bool { return v >= 1 }); err != nil {
		t.Errorf("while erp is open: %v", err)
	}
	if err := has(t, open, `toolgate_executor_circuit_transitions_total{group="erp",state="open"}`, func(v float64) bool { return v >= 1 }); err != nil {
		t.Errorf("while erp is open: %v", err)
	}
	if err := has(t, open, `toolgate_executor_circuit_state{group="get_weather"}`, func(v float64) bool { return v == 0 }); err != nil {
		t.Errorf("another group: %v", err)
	}
	for i := range 5 {
		rid := fmt.Sprintf("resp-alive-%d", i)
		p.publish(rid, "openai-chat", chat(rid, "get_weather", `{"city":"Oslo"}`, "tool_calls"))
		if rs := p.waitResults(rid, 1); rs[0]["status"] != "executed" {
			t.Fatalf("weather call %d: %v, want executed", i, rs[0])
		}
	}
	p.executorBack(t, calls)
	// The probe's success closes the breaker at once, but the durable is
	// restored (MaxAckPending, pause) by a consumer update of its own, which
	// can land after the last waiting call ran one at a time: read until it did.
	var c jetstream.Consumer
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		var err error
		if c, err = p.js.Consumer(ctx, streams.StreamExecute, streams.ExecuteDurable("erp")); err != nil {
			return err
		}
		if got := c.CachedInfo().Config.MaxAckPending; got != 2 {
			return fmt.Errorf("erp's durable MaxAckPending %d so far", got)
		}
		return has(t, scrapeMetrics(t, m), `toolgate_executor_circuit_state{group="erp"}`, func(v float64) bool { return v == 0 })
	})
	if got := c.CachedInfo().Config.MaxAckPending; got != 2 {
		t.Fatalf("erp's durable MaxAckPending %d after the circuit closed, want its concurrency 2", got)
	}
	closed := scrapeMetrics(t, m)
	for series, ok := range map[string]func(float64) bool{
		`toolgate_executor_circuit_state{group="erp"}`:                            func(v float64) bool { return v == 0 },
		`toolgate_executor_circuit_transitions_total{group="erp",state="closed"}`: func(v float64) bool { return v >= 1 },
		`toolgate_executor_group_queue{group="erp"}`:                              func(v float64) bool { return v == 0 },
	} {
		if err := has(t, closed, series, ok); err != nil {
			t.Errorf("after erp closed: %v", err)
		}
	}
}

// scrapeMetrics is what m serves on /metrics.
func scrapeMetrics(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// A group whose definition says circuit_open: fail does not wait while its
// circuit is open: a call ends execution_failed at once with the error
// circuit_open, as a dead letter an operator can replay, and nothing is
// sent; its durable is never paused, and another group runs on.
func TestBulkhead_a_fail_fast_group_ends_calls_circuit_open_while_open(t *testing.T) {
	m := metrics.New()
	tools := `
tools:
  - name: erp_invoice
    input_schema: {type: object, properties: {n: {type: integer}}, required: [n]}
    executor: {group: erp, concurrency: 2, circuit_open: fail}
    policy: {risk: read}
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string}}, required: [city]}
    policy: {risk: read}
`
	p := startRig(t, rig{
		files: map[string][]byte{"tools.yaml": []byte(tools)}, serve: []string{"get_weather"},
		configure: func(c *Config) {
			c.Circuit = Circuit{Failures: 3, Window: time.Minute, Cooldown: time.Hour}
			c.Metrics = m
		},
	})
	// No responders for erp: three failures open its circuit.
	for i := range 3 {
		rid := fmt.Sprintf("resp-ff-open-%d", i)
		p.publish(rid, "openai-chat", chat(rid, "erp_invoice", fmt.Sprintf(`{"n":%d}`, i), "tool_calls"))
	}
	testenv.Eventually(t, 20*time.Second, 20*time.Millisecond, func() error {
		return has(t, scrapeMetrics(t, m), `toolgate_executor_circuit_state{group="erp"}`, func(v float64) bool { return v == 2 }) // open
	})
	sent := atomic.Int32{}
	serveRaw(t, p.nc, "erp_invoice", func() { sent.Add(1) }) // back, but the circuit stays open for the hour
	const calls = 5
	for i := range calls {
		rid := fmt.Sprintf("resp-ff-%d", i)
		p.publish(rid, "openai-chat", chat(rid, "erp_invoice", fmt.Sprintf(`{"n":%d}`, i), "tool_calls"))
		rs := p.waitResults(rid, 1)
		errs := fmt.Sprint(rs[0]["errors"])
		if rs[0]["status"] != "execution_failed" || !strings.Contains(errs, "circuit_open") {
			t.Fatalf("erp call %d while open: status %v errors %s, want execution_failed circuit_open", i, rs[0]["status"], errs)
		}
	}
	if n := sent.Load(); n != 0 {
		t.Fatalf("%d calls were sent to erp's executor while its circuit was open", n)
	}
	// Each dead letter is stored on its own stream, after its result.
	dead := 0
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		letters, err := dlq.List(context.Background(), p.js, dlq.Filter{Stage: streams.Execute, Tool: "erp_invoice"})
		if err != nil {
			return err
		}
		dead = 0
		for _, l := range letters {
			if strings.HasPrefix(l.CallID, "resp-ff-") && !strings.HasPrefix(l.CallID, "resp-ff-open") {
				dead++
			}
		}
		if dead < calls {
			return fmt.Errorf("%d dead letters of the failed-fast calls so far", dead)
		}
		return nil
	})
	if dead != calls {
		t.Fatalf("%d dead letters of the failed-fast calls, want %d (each replayable)", dead, calls)
	}
	c, err := p.js.Consumer(context.Background(), streams.StreamExecute, streams.ExecuteDurable("erp"))
	if err != nil {
		t.Fatal(err)
	}
	if info := c.CachedInfo(); info.Paused || info.Config.MaxAckPending != 2 {
		t.Fatalf("erp's durable paused %v MaxAckPending %d: a fail-fast group is never paused", info.Paused, info.Config.MaxAckPending)
	}
	rid := "resp-ff-weather"
	p.publish(rid, "openai-chat", chat(rid, "get_weather", `{"city":"Oslo"}`, "tool_calls"))
	if rs := p.waitResults(rid, 1); rs[0]["status"] != "executed" {
		t.Fatalf("weather call: %v, want executed", rs[0])
	}
}

// A group's retry schedule is its definition's (executor.retry): its
// durable delivers a call at most attempts times, and a call whose executor
// never answers is dead-lettered after them, the status record having said
// which attempt it was on and when the next was due.
func TestBulkhead_a_groups_retry_schedule_is_its_definitions(t *testing.T) {
	tools := `
tools:
  - name: erp_invoice
    input_schema: {type: object, properties: {n: {type: integer}}, required: [n]}
    executor: {group: erp, retry: {attempts: 2, backoff: [1s]}}
    policy: {risk: read}
`
	p := startRig(t, rig{
		files: map[string][]byte{"tools.yaml": []byte(tools)},
		configure: func(c *Config) {
			c.Circuit = Circuit{Failures: 1000, Window: time.Minute} // not this test's
		},
	})
	ctx := context.Background()
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		c, err := p.js.Consumer(ctx, streams.StreamExecute, streams.ExecuteDurable("erp"))
		if err != nil {
			return err
		}
		if got := c.CachedInfo().Config.MaxDeliver; got != 2 {
			return fmt.Errorf("erp's durable MaxDeliver %d, want the definition's 2 attempts", got)
		}
		return nil
	})
	rid := "resp-retry-0"
	p.publish(rid, "openai-chat", chat(rid, "erp_invoice", `{"n":1}`, "tool_calls"))
	rs := p.waitResults(rid, 1)
	if rs[0]["status"] == "executed" {
		t.Fatalf("result %v, want it failed after its attempts", rs[0])
	}
	var letters []dlq.Letter // stored on its own stream, after the result
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		var err error
		if letters, err = dlq.List(ctx, p.js, dlq.Filter{Stage: streams.Execute, Tool: "erp_invoice"}); err != nil {
			return err
		}
		if len(letters) == 0 {
			return fmt.Errorf("no dead letter yet")
		}
		return nil
	})
	if len(letters) != 1 || letters[0].Failure != "max_deliver" {
		t.Fatalf("dead letters %+v, want one max_deliver", letters)
	}
	if h := fmt.Sprint(letters[0].Envelope.History); !strings.Contains(h, "attempt 1 of 2") {
		t.Fatalf("history %s: want the wait's attempt 1 of 2", h)
	}
}

// executorBack serves erp_invoice again, as an executor that came back
// would, and checks that each of the calls that waited for it
// (resp-dead-0 … resp-dead-<calls-1>) is executed, and run exactly once.
func (p *pipe) executorBack(t *testing.T, calls int) {
	t.Helper()
	var mu sync.Mutex
	runs := map[string]int{}
	sub, err := p.nc.Subscribe(streams.Exec("erp_invoice"), func(m *nats.Msg) {
		if m.Header.Get(execute.HeaderQuery) != "" {
			_ = m.Respond([]byte(`{"known":false}`))
			return
		}
		mu.Lock()
		runs[m.Header.Get(streams.HeaderCallID)]++
		mu.Unlock()
		_ = m.Respond([]byte(`{"ok":true,"result":{"done":true}}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	for i := range calls {
		rid := fmt.Sprintf("resp-dead-%d", i)
		if rs := p.waitResults(rid, 1); rs[0]["status"] != "executed" {
			t.Fatalf("erp call %d: %v, want executed once its executor came back", i, rs[0])
		}
	}
	mu.Lock()
	ran := maps.Clone(runs)
	mu.Unlock()
	if len(ran) != calls {
		t.Fatalf("%d calls ran, want %d", len(ran), calls)
	}
	for id, n := range ran {
		if n != 1 {
			t.Fatalf("call %s ran %d times, want once", id, n)
		}
	}
}
