package tracing

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolgate/toolgate/internal/tracehdr"
	"github.com/toolgate/toolgate/internal/worker"
)

// gateError is a handler's error with the span context of the gate span it
// failed in, so that what the worker builds for it after the span ended (a
// dead letter, a retry's status record) continues that span. It reads and
// unwraps as the error it carries.
type gateError struct {
	err error
	sc  trace.SpanContext
}

func (e *gateError) Error() string { return e.err.Error() }
func (e *gateError) Unwrap() error { return e.err }

// failedIn is ctx with the gate span err failed in as the parent, or else
// the trace context m carries.
func failedIn(m worker.Msg, err error) context.Context {
	var ge *gateError
	if errors.As(err, &ge) {
		return trace.ContextWithSpanContext(context.Background(), ge.sc)
	}
	return tracehdr.Extract(context.Background(), m.Header)
}

// DeadLetter wraps a stage's dead-letter builder so that every dead letter,
// and what is published with it (the failed call's result and status
// record), carries the input's trace: it is built in a span
// toolgate.<stage>.dead_letter (kind producer) with the failure class
// (toolgate.failure, e.g. max_deliver, panic, output_too_large) and an error
// status, the child of the gate span the input failed in, or of the input's
// trace context when the failure came from outside the handler (a panic, an
// output too large to store). With a nil or no-op provider the input's
// trace context still reaches the outputs.
func DeadLetter(tp trace.TracerProvider, stage string, dl worker.DeadLetter) worker.DeadLetter {
	tr := tracer(tp)
	name := "toolgate." + stage + ".dead_letter"
	return func(m worker.Msg, code string, err error) []worker.Output {
		ctx, span := tr.Start(failedIn(m, err), name, trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithAttributes(AttrStage.String(stage), attribute.String("messaging.system", "nats")))
		defer span.End()
		outs := dl(m, code, err)
		carry(ctx, span, outs)
		if span.IsRecording() {
			annotate(span, m, outs, nil)
			span.SetAttributes(AttrFailure.String(code))
			if err != nil {
				span.RecordError(err)
			}
			span.SetStatus(codes.Error, code)
		}
		return outs
	}
}

// Retrying wraps a worker's Retrying builder (nil stays nil) so that the
// status records it publishes for a transiently failed input carry the
// trace context of the gate span that failed, which already records the
// failure (toolgate.failure), or else the input's.
func Retrying(r func(worker.Msg, error, worker.Attempt) []worker.Output) func(worker.Msg, error, worker.Attempt) []worker.Output {
	if r == nil {
		return nil
	}
	return func(m worker.Msg, err error, a worker.Attempt) []worker.Output {
		outs := r(m, err, a)
		ctx := failedIn(m, err)
		carry(ctx, trace.SpanFromContext(ctx), outs)
		return outs
	}
}

// carry injects span's context into every output's header; nothing when
// there is no valid span context to carry.
func carry(ctx context.Context, span trace.Span, outs []worker.Output) {
	if !span.SpanContext().IsValid() {
		return
	}
	for i := range outs {
		if outs[i].Header == nil {
			outs[i].Header = map[string][]string{}
		}
		tracehdr.Inject(ctx, outs[i].Header)
	}
}

func tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(Instrumentation)
}
