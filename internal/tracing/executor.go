package tracing

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/tool"
)

// GenAI semantic convention attributes of tool execution.
const (
	AttrGenAIOperation = attribute.Key("gen_ai.operation.name")
	AttrGenAIToolName  = attribute.Key("gen_ai.tool.name")
	AttrGenAIToolCall  = attribute.Key("gen_ai.tool.call.id")
	AttrErrorType      = attribute.Key("error.type")
)

// Executors wraps an executor selector so that each request runs in an
// `execute_tool <tool>` span (OpenTelemetry GenAI conventions), whose
// context the executor injects into its request (tracehdr). An executor
// that answers status queries still does.
func Executors(tp trace.TracerProvider, sel func(*tool.Compiled) execute.Executor) func(*tool.Compiled) execute.Executor {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	tr := tp.Tracer(Instrumentation)
	return func(t *tool.Compiled) execute.Executor {
		x := sel(t)
		tx := traced{x: x, tr: tr}
		if q, ok := x.(execute.StatusQuerier); ok {
			return tracedQuerier{traced: tx, q: q}
		}
		return tx
	}
}

type traced struct {
	x  execute.Executor
	tr trace.Tracer
}

func (t traced) Execute(ctx context.Context, req execute.Request) (execute.Reply, error) {
	ctx, span := t.tr.Start(ctx, "execute_tool "+req.Tool, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		AttrGenAIOperation.String("execute_tool"), AttrGenAIToolName.String(req.Tool), AttrGenAIToolCall.String(req.CallID)))
	defer span.End()
	reply, err := t.x.Execute(ctx, req)
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetAttributes(AttrErrorType.String(errorType(err)))
		span.SetStatus(codes.Error, execute.Why(err))
	case !reply.OK:
		span.SetAttributes(AttrErrorType.String("execution_failed"))
		span.SetStatus(codes.Error, "execution_failed")
	}
	return reply, err
}

type tracedQuerier struct {
	traced
	q execute.StatusQuerier
}

func (t tracedQuerier) Status(ctx context.Context, req execute.Request) (execute.StatusReply, error) {
	return t.q.Status(ctx, req)
}

// errorType is the low-cardinality class of an executor's error.
func errorType(err error) string {
	switch {
	case errors.Is(err, execute.ErrRefused):
		return "signature_refused"
	case errors.Is(err, execute.ErrNotRun):
		return "not_run"
	case errors.Is(err, execute.ErrUnknown):
		return "outcome_unknown"
	}
	return "_OTHER"
}
