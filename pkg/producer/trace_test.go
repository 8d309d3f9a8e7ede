package producer

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

const goodParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestValidTraceParent(t *testing.T) {
	for _, test := range []struct {
		in   string
		want bool
	}{
		{goodParent, true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", true}, // a later version may say more
		{"", false},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},         // uppercase
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},         // zero trace id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},         // zero parent id
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},         // version ff
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", false},       // 00 is exactly 55
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", false},        // more without '-'
		{"00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", false},         // dashes misplaced
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", false},         // not hex
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nX: y", false}, // header injection
		{strings.Repeat("a", 4096), false},
	} {
		if got := ValidTraceParent(test.in); got != test.want {
			t.Errorf("ValidTraceParent(%.70q) = %v, want %v", test.in, got, test.want)
		}
	}
}

func TestValidTraceState(t *testing.T) {
	many := make([]string, 33)
	for i := range many {
		many[i] = "k" + strings.Repeat("x", i) + "=v"
	}
	for _, test := range []struct {
		in   string
		want bool
	}{
		{"", true},
		{"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", true},
		{"tenant1@vendor=v, other=1", true},
		{"Rojo=1", false},        // uppercase key
		{"rojo=1,rojo=2", false}, // duplicate key
		{"rojo", false},
		{"rojo=a=b", false},
		{"rojo=\x01", false},
		{"rojo= ", false},
		{strings.Join(many, ","), false}, // 33 members
		{"k=" + strings.Repeat("v", 256) + ",l=" + strings.Repeat("v", 256), false}, // over 512 bytes
	} {
		if got := ValidTraceState(test.in); got != test.want {
			t.Errorf("ValidTraceState(%.60q) = %v, want %v", test.in, got, test.want)
		}
	}
}

// The trace context goes out under the lowercase W3C keys, exactly; a
// malformed one is refused and nothing is published.
func TestPublishResponse_sends_the_trace_context_lowercase_and_refuses_a_malformed_one(t *testing.T) {
	_, js, st := rig(t)
	p := New(js)
	m := Meta{Provider: "openai-chat", ResponseID: "resp-tp", TraceParent: goodParent, TraceState: "rojo=1"}
	if err := p.PublishResponse(context.Background(), m, []byte(`{"id":"x"}`)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Meta{
		{Provider: "openai-chat", ResponseID: "resp-bad", TraceParent: "00-zz-00f067aa0ba902b7-01"},
		{Provider: "openai-chat", ResponseID: "resp-bad", TraceParent: goodParent, TraceState: "Bad Key=1"},
		{Provider: "openai-chat", ResponseID: "resp-bad", TraceState: "rojo=1"},
	} {
		if err := p.PublishResponse(context.Background(), bad, []byte(`{"id":"y"}`)); err == nil || !strings.Contains(err.Error(), "trace") {
			t.Errorf("%+v: err %v, want a trace context error", bad, err)
		}
	}
	msgs := stored(t, st)
	if len(msgs) != 1 {
		t.Fatalf("%d messages stored, want only the valid one", len(msgs))
	}
	h := msgs[0].Header
	if got := h["traceparent"]; len(got) != 1 || got[0] != goodParent || h["tracestate"][0] != "rojo=1" {
		t.Fatalf("headers %v, want traceparent and tracestate under lowercase keys", h)
	}
}

// TraceFrom takes the caller's span from ctx through an OpenTelemetry
// propagator; an injector writing something malformed is not followed.
func TestMeta_TraceFrom_takes_the_span_in_ctx(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "produce")
	defer span.End()
	inject := func(ctx context.Context, c map[string]string) {
		propagation.TraceContext{}.Inject(ctx, propagation.MapCarrier(c))
	}
	m := Meta{Provider: "openai-chat", ResponseID: "r"}.TraceFrom(ctx, inject)
	sc := span.SpanContext()
	if want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"; m.TraceParent != want {
		t.Fatalf("TraceParent %q, want the span's %s", m.TraceParent, want)
	}
	own := Meta{TraceParent: goodParent}.TraceFrom(ctx, inject)
	if own.TraceParent != goodParent {
		t.Fatalf("an explicit TraceParent was replaced: %q", own.TraceParent)
	}
	if none := (Meta{}).TraceFrom(context.Background(), inject); none.TraceParent != "" {
		t.Fatalf("no span in ctx, yet TraceParent %q", none.TraceParent)
	}
	junk := Meta{}.TraceFrom(ctx, func(_ context.Context, c map[string]string) {
		c["traceparent"], c["tracestate"] = "00-nope\r\nX-Evil: 1", "a=1"
	})
	if junk.TraceParent != "" || junk.TraceState != "" {
		t.Fatalf("a malformed injected traceparent was taken: %+v", junk)
	}
}
