package tracing_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tracing/tracetest"
	"github.com/toolgate/toolgate/streams"
)

// exportTo points this process's tracer providers (stage.Run reads OTEL_*)
// at rcv, batching every 50 ms, with the default service names.
func exportTo(t *testing.T, rcv *tracetest.Receiver) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
}

// answerWeather serves toolgate.exec.get_weather with a fixed answer until
// cleanup; the returned func is the last request's headers.
func answerWeather(t *testing.T, nc *nats.Conn) func() nats.Header {
	t.Helper()
	var mu sync.Mutex
	var last nats.Header
	sub, err := nc.Subscribe("toolgate.exec.get_weather", func(m *nats.Msg) {
		mu.Lock()
		last = m.Header
		mu.Unlock()
		_ = m.Respond([]byte(`{"ok":true,"result":{"temp_c":21}}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return func() nats.Header {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// publishTraced publishes an OpenAI chat response rid calling get_weather,
// as a producer inside the trace producerTrace (span producerSpan) would,
// with tracestate when it is not empty.
func publishTraced(t *testing.T, js jetstream.JetStream, rid, tracestate string) {
	t.Helper()
	m := nats.NewMsg(streams.SubjectInResponse)
	m.Data = fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_%s","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}]}`, rid, rid)
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, rid)
	m.Header["traceparent"] = []string{"00-" + producerTrace + "-" + producerSpan + "-01"}
	if tracestate != "" {
		m.Header["tracestate"] = []string{tracestate}
	}
	if _, err := js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

// waitSpans waits until rcv holds a span of every name in want and returns
// the spans by name.
func waitSpans(t *testing.T, rcv *tracetest.Receiver, want []string) map[string]tracetest.Span {
	t.Helper()
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
	return spans
}

// checkChain checks that the spans named in want are in the producer's
// trace, the first the child of the producer's span and each next the child
// of the one before, and that the ith comes from service toolgate-procs[i]
// (for as many as procs names).
func checkChain(t *testing.T, spans map[string]tracetest.Span, want, procs []string) {
	t.Helper()
	parent := producerSpan
	for i, n := range want {
		s := spans[n]
		if s.TraceID != producerTrace {
			t.Errorf("%s: trace %s, want the producer's %s", n, s.TraceID, producerTrace)
		}
		if s.Parent != parent {
			t.Errorf("%s: parent %s, want %s (the one before)", n, s.Parent, parent)
		}
		if i < len(procs) && s.Service != "toolgate-"+procs[i] {
			t.Errorf("%s: from service %q, want its own process toolgate-%s", n, s.Service, procs[i])
		}
		parent = s.SpanID
	}
}
