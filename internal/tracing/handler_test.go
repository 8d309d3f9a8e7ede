package tracing

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
)

const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func echo(ctx context.Context, m worker.Msg) ([]worker.Output, error) {
	h := nats.Header{}
	h.Set(wire.HeaderCallID, "c1")
	h.Set(wire.HeaderTool, "get_weather")
	h.Set(wire.HeaderStatus, "parsed")
	return []worker.Output{{Subject: "next", Header: h}, {Subject: "bare"}}, nil
}

// Off (no provider): the producer's trace context still reaches the outputs
// unchanged, and an input without one leaves the outputs as built.
func TestHandler_off_passes_the_trace_context_through_and_adds_nothing_without_one(t *testing.T) {
	h := Handler(nil, "parse", echo, nil)
	outs, err := h(context.Background(), worker.Msg{Header: nats.Header{"traceparent": {incoming}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if got := o.Header["traceparent"]; len(got) != 1 || got[0] != incoming {
			t.Fatalf("%s: traceparent %q, want the incoming %s unchanged", o.Subject, got, incoming)
		}
	}
	outs, _ = h(context.Background(), worker.Msg{})
	if outs[1].Header != nil || len(outs[0].Header["traceparent"]) != 0 {
		t.Fatalf("outputs changed without a trace context: %v", outs)
	}
}

func TestHandler_span_carries_the_failure_of_a_failed_input(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	fail := func(context.Context, worker.Msg) ([]worker.Output, error) {
		return nil, worker.Permanent("undecodable", errors.New("bad json"))
	}
	in := nats.Header{"traceparent": {incoming}}
	in.Set(wire.HeaderCallID, "c9")
	if _, err := Handler(tp, "validate", fail, nil)(context.Background(), worker.Msg{Header: in}); err == nil {
		t.Fatal("error lost")
	}
	spans := rec.Ended()
	if len(spans) != 1 || spans[0].Name() != "toolgate.validate" {
		t.Fatalf("spans %v", spans)
	}
	attrs := map[string]string{}
	for _, a := range spans[0].Attributes() {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	if attrs["toolgate.failure"] != "undecodable" || attrs["toolgate.call.id"] != "c9" || spans[0].Status().Description != "undecodable" {
		t.Fatalf("attributes %v status %v", attrs, spans[0].Status())
	}
	if spans[0].Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("parent %v", spans[0].Parent())
	}
}

// An input untraced names is handled as it is and starts no span
// (accumulate's own claim messages); any other still gets its span.
func TestHandler_an_untraced_input_gets_no_span(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	handled := 0
	h := Handler(tp, "accumulate", func(context.Context, worker.Msg) ([]worker.Output, error) {
		handled++
		return nil, nil
	}, func(m worker.Msg) bool { return m.Subject == "own.claim" })
	for _, subj := range []string{"own.claim", "a.response"} {
		if _, err := h(context.Background(), worker.Msg{Subject: subj, Header: nats.Header{"traceparent": {incoming}}}); err != nil {
			t.Fatal(err)
		}
	}
	if handled != 2 {
		t.Fatalf("handled %d inputs, want both", handled)
	}
	spans := rec.Ended()
	if len(spans) != 1 || spans[0].Name() != "toolgate.accumulate" {
		t.Fatalf("spans %v, want one toolgate.accumulate, for a.response only", spans)
	}
}
