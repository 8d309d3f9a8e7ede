package tracehdr

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"
)

// A producer's valid tracestate may be 16 KiB (32 members of up to 512
// bytes); carried whole onto every output and dead letter it could push a
// message sized to fit NATS past its max payload, and a dead letter that
// does not fit is never stored, its input redelivered for ever. Inject
// cuts it to MaxTraceState the W3C way: members over 128 bytes first, then
// from the end. Before, it went on whole.
func TestInject_cuts_a_tracestate_over_512_bytes(t *testing.T) {
	big := func(k string) string { return k + "=" + strings.Repeat("v", 200) }
	var members []string
	members = append(members, "new=1", big("b1"), "mid=2", big("b2"))
	for i := range 20 {
		members = append(members, "o"+strings.Repeat("x", i)+"="+strings.Repeat("w", 20))
	}
	members = append(members, big("b3"))
	in := nats.Header{"traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "tracestate": {strings.Join(members, ",")}}
	ctx := Extract(context.Background(), in)
	if got := trace.SpanContextFromContext(ctx).TraceState().Len(); got != len(members) {
		t.Fatalf("the propagator kept %d of %d members: the input is not the valid one the test needs", got, len(members))
	}
	out := nats.Header{}
	Inject(ctx, out)
	hh := http.Header{}
	InjectHTTP(ctx, hh)
	for name, ts := range map[string]string{"nats": out.Get("tracestate"), "http": hh.Get("Tracestate")} {
		if len(ts) > MaxTraceState || ts == "" {
			t.Fatalf("%s: tracestate of %d bytes, want 1..%d", name, len(ts), MaxTraceState)
		}
		if strings.Contains(ts, "b1=") || strings.Contains(ts, "b2=") || strings.Contains(ts, "b3=") {
			t.Errorf("%s: a member over 128 bytes kept while small ones went: %s", name, ts)
		}
		if !strings.HasPrefix(ts, "new=1,mid=2,o=") {
			t.Errorf("%s: the newest members were not kept first, in order: %.60s", name, ts)
		}
	}
	small := nats.Header{}
	Inject(Extract(context.Background(), nats.Header{"traceparent": in["traceparent"], "tracestate": {"a=1,b=2"}}), small)
	if small.Get("tracestate") != "a=1,b=2" {
		t.Fatalf("a short tracestate changed: %q", small.Get("tracestate"))
	}
}
