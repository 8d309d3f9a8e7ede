package tracing_test

import (
	"context"
	"strings"
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
	exportTo(t, rcv)

	srv := testenv.RunJetStream(t)
	rds := testenv.RunRedis(t)
	nc, js := testenv.Connect(t, srv)
	ctx := context.Background()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	applyTool(t, js)

	execHeader := answerWeather(t, nc)

	dir := t.TempDir()
	if _, err := seal.Ensure(dir, streams.Names()); err != nil {
		t.Fatal(err)
	}
	gates := []string{streams.Accumulate, streams.Parse, streams.Validate, streams.Business, streams.Policy, streams.Execute}
	for _, st := range streams.Names() {
		runStage(t, stage.Config{NATSURL: srv.ClientURL(), RedisURL: rds.URL(), IdemStore: stage.IdemRedis, Stages: []string{st}, SealKeys: dir, SkipEnsure: true,
			Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)})
	}

	publishTraced(t, js, "resp-trace", "producer=1")

	result := waitResult(t, js, "resp-trace")
	want := append(gateNames(gates), "execute_tool get_weather")
	spans := waitSpans(t, rcv, want)
	checkChain(t, spans, want, gates)
	ex, tool := spans["toolgate.execute"], spans["execute_tool get_weather"]
	if ex.Attrs["toolgate.call.id"] == "" || ex.Attrs["toolgate.tool"] != "get_weather" || ex.Attrs["toolgate.status"] != "executed" {
		t.Errorf("execute gate span attributes %v, want call id, tool get_weather, status executed", ex.Attrs)
	}
	if tool.Attrs["gen_ai.operation.name"] != "execute_tool" || tool.Attrs["gen_ai.tool.name"] != "get_weather" || tool.Attrs["gen_ai.tool.call.id"] != ex.Attrs["toolgate.call.id"] {
		t.Errorf("execute_tool span attributes %v, want the GenAI tool execution attributes", tool.Attrs)
	}
	if got := execHeader()["traceparent"]; len(got) != 1 || got[0] != "00-"+producerTrace+"-"+tool.SpanID+"-01" {
		t.Errorf("executor got traceparent %q (headers %v), want the execute_tool span's of trace %s", got, execHeader(), producerTrace)
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
