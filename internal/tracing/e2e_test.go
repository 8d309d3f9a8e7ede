package tracing_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/tracing/tracetest"
	"github.com/toolgate/toolgate/streams"
)

const (
	producerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	producerSpan  = "00f067aa0ba902b7"
)

const weatherTool = `tools:
  - name: get_weather
    description: Current weather for a city.
    input_schema:
      type: object
      properties:
        city: {type: string, minLength: 1}
      required: [city]
      additionalProperties: false
    policy:
      risk: read
`

// The gates run as separate stages inside this test process (one stage.Run
// each, each with its own tracer provider from OTEL_* and its own
// service.name), all exporting to one OTLP receiver; the same trace across
// real OS processes is TestTracing_one_trace_across_seven_stage_processes. A producer publishes a response with a
// traceparent; every gate's span, and the execute_tool span, must be in the
// producer's trace, each the child of the hop before, the executor must get
// a traceparent of that trace, and so must the result message. Before, each
// hop built fresh headers and the trace ended at the first gate.
func TestTracing_one_trace_from_the_producer_through_every_gate_to_the_executor(t *testing.T) {
	rcv := tracetest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")

	srv := testenv.RunJetStream(t)
	rds := testenv.RunRedis(t)
	nc, js := testenv.Connect(t, srv)
	ctx := context.Background()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	applyTool(t, js)

	var mu sync.Mutex
	var execHeader nats.Header
	sub, err := nc.Subscribe("toolgate.exec.get_weather", func(m *nats.Msg) {
		mu.Lock()
		execHeader = m.Header
		mu.Unlock()
		_ = m.Respond([]byte(`{"ok":true,"result":{"temp_c":21}}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })

	dir := t.TempDir()
	if _, err := seal.Ensure(dir, streams.Names()); err != nil {
		t.Fatal(err)
	}
	gates := []string{streams.Accumulate, streams.Parse, streams.Validate, streams.Business, streams.Policy, streams.Execute}
	for _, st := range streams.Names() {
		runStage(t, stage.Config{NATSURL: srv.ClientURL(), RedisURL: rds.URL(), IdemStore: stage.IdemRedis, Stages: []string{st}, SealKeys: dir, SkipEnsure: true,
			Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)})
	}

	m := nats.NewMsg(streams.SubjectInResponse)
	m.Data = []byte(`{"id":"resp-trace","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_trace","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}]}`)
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, "resp-trace")
	m.Header["traceparent"] = []string{"00-" + producerTrace + "-" + producerSpan + "-01"}
	m.Header["tracestate"] = []string{"producer=1"}
	if _, err := js.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}

	result := waitResult(t, js, "resp-trace")
	want := append(gateNames(gates), "execute_tool get_weather")
	var spans map[string]tracetest.Span
	testenv.Eventually(t, 20*time.Second, 20*time.Millisecond, func() error {
		spans = rcv.ByName()
		for _, n := range want {
			if _, ok := spans[n]; !ok {
				return fmt.Errorf("no span %s yet (have %d)", n, len(spans))
			}
		}
		return nil
	})
	parent := producerSpan
	for i, n := range want {
		s := spans[n]
		if s.TraceID != producerTrace {
			t.Errorf("%s: trace %s, want the producer's %s", n, s.TraceID, producerTrace)
		}
		if s.Parent != parent {
			t.Errorf("%s: parent %s, want %s (the hop before)", n, s.Parent, parent)
		}
		if i < len(gates) && s.Service != "toolgate-"+gates[i] {
			t.Errorf("%s: from service %q, want its own process toolgate-%s", n, s.Service, gates[i])
		}
		parent = s.SpanID
	}
	ex, tool := spans["toolgate.execute"], spans["execute_tool get_weather"]
	if ex.Attrs["toolgate.call.id"] == "" || ex.Attrs["toolgate.tool"] != "get_weather" || ex.Attrs["toolgate.status"] != "executed" {
		t.Errorf("execute gate span attributes %v, want call id, tool get_weather, status executed", ex.Attrs)
	}
	if tool.Attrs["gen_ai.operation.name"] != "execute_tool" || tool.Attrs["gen_ai.tool.name"] != "get_weather" || tool.Attrs["gen_ai.tool.call.id"] != ex.Attrs["toolgate.call.id"] {
		t.Errorf("execute_tool span attributes %v, want the GenAI tool execution attributes", tool.Attrs)
	}
	mu.Lock()
	got := execHeader["traceparent"]
	mu.Unlock()
	if len(got) != 1 || got[0] != "00-"+producerTrace+"-"+tool.SpanID+"-01" {
		t.Errorf("executor got traceparent %q (headers %v), want the execute_tool span's of trace %s", got, execHeader, producerTrace)
	}
	if tp := result["traceparent"]; len(tp) != 1 || !strings.HasPrefix(tp[0], "00-"+producerTrace+"-") {
		t.Errorf("result message traceparent %q, want one of trace %s", tp, producerTrace)
	}
	if ts := result["tracestate"]; len(ts) != 1 || ts[0] != "producer=1" {
		t.Errorf("result message tracestate %q, want the producer's", ts)
	}
}

func gateNames(gates []string) []string {
	var out []string
	for _, g := range gates {
		out = append(out, "toolgate."+g)
	}
	return out
}

func applyTool(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load("tools.yaml", []byte(weatherTool))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Apply(context.Background(), kv, "tools.yaml", defs, false); err != nil {
		t.Fatal(err)
	}
}

// runStage runs one stage process until cleanup.
func runStage(t *testing.T, cfg stage.Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() { done <- stage.Run(ctx, cfg, ready) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("stage %v stopped at start: %v", cfg.Stages, err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("stage %v not ready", cfg.Stages)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// waitResult returns the headers of the result message published for rid.
func waitResult(t *testing.T, js jetstream.JetStream, rid string) nats.Header {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, streams.StreamResults)
	if err != nil {
		t.Fatal(err)
	}
	var h nats.Header
	testenv.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		m, err := st.GetLastMsgForSubject(ctx, streams.ResultsOf(rid))
		if err != nil {
			return err
		}
		h = m.Header
		return nil
	})
	return h
}
