package tracing

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/internal/tracehdr"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
)

// Instrumentation is the tracer name of toolgate's spans.
const Instrumentation = "github.com/toolgate/toolgate"

// Span attributes of a gate's span.
const (
	AttrCallID  = attribute.Key("toolgate.call.id")
	AttrTool    = attribute.Key("toolgate.tool")
	AttrStatus  = attribute.Key("toolgate.status")
	AttrFailure = attribute.Key("toolgate.failure")
	AttrStage   = attribute.Key("toolgate.stage")
)

// Handler wraps a stage's handler with the gate's span, toolgate.<stage>: a
// child of the trace context the input carries (a producer's traceparent,
// or the previous gate's), and the parent every output carries on. The
// span's attributes come from the outputs' Toolgate-* headers (call id,
// tool, status, failure) and the handler's error. With a nil or no-op
// provider the incoming trace context still passes to the outputs.
//
// A failed input's error comes back carrying the gate span's context (it
// reads and unwraps as before), so that its dead letter (DeadLetter) and
// retry status records (Retrying) continue the gate's span. A panicking
// handler's span records the failure panic.
//
// untraced, when set, names the inputs that get no span (accumulate's own
// claim messages, which it passes over): they are handled as they are.
func Handler(tp trace.TracerProvider, stage string, h worker.Handler, untraced func(worker.Msg) bool) worker.Handler {
	tr := tracer(tp)
	name := "toolgate." + stage
	return func(ctx context.Context, m worker.Msg) ([]worker.Output, error) {
		if untraced != nil && untraced(m) {
			return h(ctx, m)
		}
		ctx = tracehdr.Extract(ctx, m.Header)
		ctx, span := tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindConsumer),
			trace.WithAttributes(AttrStage.String(stage), attribute.String("messaging.system", "nats"), attribute.String("messaging.destination.name", m.Subject)))
		returned := false
		defer func() {
			if !returned && span.IsRecording() { // h panicked: the worker dead-letters it as panic
				span.SetAttributes(AttrFailure.String("panic"))
				span.SetStatus(codes.Error, "panic")
			}
			span.End()
		}()
		outs, err := h(ctx, m)
		returned = true
		carry(ctx, span, outs)
		if span.IsRecording() {
			annotate(span, m, outs, err)
		}
		if err != nil && span.SpanContext().IsValid() {
			err = &gateError{err: err, sc: span.SpanContext()}
		}
		return outs, err
	}
}

// annotate sets the gate span's attributes and status.
func annotate(span trace.Span, m worker.Msg, outs []worker.Output, err error) {
	hdrs := make([]map[string][]string, 0, len(outs)+1)
	for _, o := range outs {
		hdrs = append(hdrs, o.Header)
	}
	if len(outs) == 0 {
		hdrs = append(hdrs, m.Header)
	}
	for _, a := range []struct {
		key attribute.Key
		hdr string
	}{{AttrCallID, wire.HeaderCallID}, {AttrTool, wire.HeaderTool}, {AttrStatus, wire.HeaderStatus}, {AttrFailure, wire.HeaderFailure}} {
		if vs := distinct(hdrs, a.hdr); len(vs) == 1 {
			span.SetAttributes(a.key.String(vs[0]))
		} else if len(vs) > 1 {
			span.SetAttributes(a.key.StringSlice(vs))
		}
	}
	if err == nil {
		return
	}
	failure := "error"
	var we *worker.Error
	if errors.As(err, &we) {
		failure = we.Code
	}
	span.SetAttributes(AttrFailure.String(failure))
	span.RecordError(err)
	span.SetStatus(codes.Error, failure)
}

// distinct lists the distinct non-empty values of header key, in order.
func distinct(hdrs []map[string][]string, key string) []string {
	var out []string
	seen := map[string]bool{}
	for _, h := range hdrs {
		v := ""
		if vs := h[key]; len(vs) > 0 {
			v = vs[0]
		}
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
