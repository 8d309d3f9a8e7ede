package tracehdr

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// MaxTraceState bounds a tracestate taken from outside (the W3C
// recommendation's 512 bytes); a longer one is not forwarded.
const MaxTraceState = 512

// FromHTTP is the W3C trace context of an incoming HTTP request, written
// anew from what the propagator parsed, never copied: a missing,
// malformed or repeated traceparent gives "", "" (nothing is forwarded); a
// malformed or over-long tracestate gives the traceparent alone. Repeated
// tracestate headers are one list, as HTTP combines them.
func FromHTTP(h http.Header) (traceparent, tracestate string) {
	tps := h.Values("traceparent")
	if len(tps) != 1 {
		return "", ""
	}
	in := propagation.HeaderCarrier{}
	in.Set("traceparent", tps[0])
	if ts := h.Values("tracestate"); len(ts) > 0 {
		in.Set("tracestate", strings.Join(ts, ","))
	}
	ctx := Propagator().Extract(context.Background(), in)
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return "", ""
	}
	if len(sc.TraceState().String()) > MaxTraceState {
		sc = sc.WithTraceState(trace.TraceState{})
	}
	out := propagation.MapCarrier{}
	Propagator().Inject(trace.ContextWithRemoteSpanContext(context.Background(), sc), out)
	return out["traceparent"], out["tracestate"]
}
