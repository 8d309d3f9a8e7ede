package tracing

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
)

const incomingTrace = "4bf92f3577b34da6a3ce929d0e0e4736"

// fresh is a dead-letter builder as pipeline's: fresh headers, no trace.
func fresh(m worker.Msg, code string, err error) []worker.Output {
	h := nats.Header{}
	h.Set(wire.HeaderCallID, "c7")
	h.Set(wire.HeaderFailure, code)
	return []worker.Output{{Subject: "toolgate.dlq.validate." + code, Header: h}, {Subject: "toolgate.results.r"}}
}

func attrsOf(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, a := range s.Attributes() {
		out[string(a.Key)] = a.Value.Emit()
	}
	return out
}

// A gate that fails: its dead letter is built after the gate span ended,
// outside Handler. It must carry the producer's trace, in a dead_letter
// span that is the gate span's child and records the failure class.
// Before, the dead letter had no traceparent at all.
func TestDeadLetter_of_a_failed_gate_continues_the_gate_span(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	fail := func(context.Context, worker.Msg) ([]worker.Output, error) {
		return nil, worker.Permanent("undecodable", errors.New("bad json"))
	}
	in := worker.Msg{Header: nats.Header{"traceparent": {incoming}}}
	_, err := Handler(tp, "validate", fail, nil)(context.Background(), in)
	var we *worker.Error
	if !errors.As(err, &we) || we.Code != "undecodable" || !strings.Contains(err.Error(), "bad json") {
		t.Fatalf("the handler's error changed: %v", err)
	}
	outs := DeadLetter(tp, "validate", fresh)(in, we.Code, err)
	spans := rec.Ended()
	if len(spans) != 2 || spans[0].Name() != "toolgate.validate" || spans[1].Name() != "toolgate.validate.dead_letter" {
		t.Fatalf("spans %v", spans)
	}
	gate, dl := spans[0], spans[1]
	if dl.Parent().SpanID() != gate.SpanContext().SpanID() || dl.SpanContext().TraceID().String() != incomingTrace {
		t.Fatalf("dead_letter span parent %v trace %v, want the gate span %v of trace %s", dl.Parent().SpanID(), dl.SpanContext().TraceID(), gate.SpanContext().SpanID(), incomingTrace)
	}
	if a := attrsOf(dl); a["toolgate.failure"] != "undecodable" || a["toolgate.call.id"] != "c7" || dl.Status().Description != "undecodable" {
		t.Fatalf("dead_letter span attributes %v status %v", a, dl.Status())
	}
	want := "00-" + incomingTrace + "-" + dl.SpanContext().SpanID().String() + "-01"
	for _, o := range outs {
		if got := o.Header["traceparent"]; len(got) != 1 || got[0] != want {
			t.Fatalf("%s: traceparent %q, want %s", o.Subject, got, want)
		}
	}
}

// A panic and an output too large fail outside the handler's error: the
// dead letter then continues the input's own trace context, and a panic's
// gate span records it.
func TestDeadLetter_of_a_panic_continues_the_input_trace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	in := worker.Msg{Header: nats.Header{"Traceparent": {incoming}}} // any spelling is read
	func() {
		defer func() { _ = recover() }()
		_, _ = Handler(tp, "parse", func(context.Context, worker.Msg) ([]worker.Output, error) { panic("boom") }, nil)(context.Background(), in)
	}()
	outs := DeadLetter(tp, "parse", fresh)(in, "panic", worker.Permanent("panic", errors.New("handler panic: boom")))
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("spans %v", spans)
	}
	if a := attrsOf(spans[0]); a["toolgate.failure"] != "panic" || spans[0].Status().Description != "panic" {
		t.Fatalf("gate span of a panic: attributes %v status %v", a, spans[0].Status())
	}
	if p := spans[1].Parent(); p.TraceID().String() != incomingTrace || p.SpanID().String() != "00f067aa0ba902b7" {
		t.Fatalf("dead_letter span parent %v, want the input's span", p)
	}
	if got := outs[0].Header["traceparent"]; len(got) != 1 || !strings.HasPrefix(got[0], "00-"+incomingTrace+"-") {
		t.Fatalf("traceparent %q", got)
	}
}

// Tracing off: the dead letter and the retry status records carry the
// input's traceparent unchanged; without one they stay as built.
func TestDeadLetter_and_Retrying_off_pass_the_input_trace_through(t *testing.T) {
	in := worker.Msg{Header: nats.Header{"traceparent": {incoming}, "tracestate": {"p=1"}}}
	_, err := Handler(nil, "execute", func(context.Context, worker.Msg) ([]worker.Output, error) {
		return nil, worker.Transient("executor_unavailable", 0, errors.New("no responders"))
	}, nil)(context.Background(), in)
	retrying := Retrying(func(worker.Msg, error, worker.Attempt) []worker.Output {
		return []worker.Output{{Subject: "$KV.calls.c1"}}
	})
	for name, outs := range map[string][]worker.Output{
		"dead letter": DeadLetter(nil, "execute", fresh)(in, "max_deliver", err),
		"retrying":    retrying(in, err, worker.Attempt{N: 1}),
	} {
		for _, o := range outs {
			if got := o.Header["traceparent"]; len(got) != 1 || got[0] != incoming || o.Header.Get("tracestate") != "p=1" {
				t.Errorf("%s %s: headers %v, want the input's trace context", name, o.Subject, o.Header)
			}
		}
	}
	outs := DeadLetter(nil, "execute", fresh)(worker.Msg{}, "max_deliver", errors.New("x"))
	if outs[1].Header != nil || outs[0].Header.Get("traceparent") != "" {
		t.Fatalf("outputs changed without a trace context: %v", outs)
	}
	if Retrying(nil) != nil {
		t.Fatal("Retrying(nil) must stay nil: the worker publishes nothing then")
	}
}

// The retry status record continues the gate span that failed.
func TestRetrying_status_record_continues_the_failed_gate_span(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	in := worker.Msg{Header: nats.Header{"traceparent": {incoming}}}
	_, err := Handler(tp, "execute", func(context.Context, worker.Msg) ([]worker.Output, error) {
		return nil, worker.Transient("executor_unavailable", 0, errors.New("no responders"))
	}, nil)(context.Background(), in)
	var gotErr error
	outs := Retrying(func(_ worker.Msg, err error, _ worker.Attempt) []worker.Output {
		gotErr = err
		return []worker.Output{{Subject: "$KV.calls.c1", Header: nats.Header{"Nats-Expected-Last-Subject-Sequence": {"4"}}}}
	})(in, err, worker.Attempt{N: 1})
	gate := rec.Ended()[0]
	want := "00-" + incomingTrace + "-" + gate.SpanContext().SpanID().String() + "-01"
	if got := outs[0].Header["traceparent"]; len(got) != 1 || got[0] != want || outs[0].Header.Get("Nats-Expected-Last-Subject-Sequence") != "4" {
		t.Fatalf("status record headers %v, want traceparent %s beside its own", outs[0].Header, want)
	}
	var we *worker.Error
	if !errors.As(gotErr, &we) || we.Code != "executor_unavailable" {
		t.Fatalf("the builder got %v, want the handler's classified error", gotErr)
	}
	if a := attrsOf(gate); a["toolgate.failure"] != "executor_unavailable" {
		t.Fatalf("gate span attributes %v", a)
	}
}
