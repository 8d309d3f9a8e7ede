package tracehdr

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// FromHTTP is the W3C trace context of an incoming HTTP request, written
// anew from what the propagator parsed, never copied: a missing,
// malformed or repeated traceparent gives "", "" (nothing is forwarded); a
// malformed tracestate gives the traceparent alone, an over-long one is
// cut to MaxTraceState (bound.go). Repeated tracestate headers are one
// list, as HTTP combines them.
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
	out := propagation.MapCarrier{}
	Propagator().Inject(bounded(trace.ContextWithRemoteSpanContext(context.Background(), sc)), out)
	return out["traceparent"], out["tracestate"]
}
