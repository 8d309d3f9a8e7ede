// Package tracing is toolgate's OpenTelemetry tracing: a tracer provider
// configured by the standard OTEL_* environment variables, one span per gate
// (handler.go) and an execute_tool span around each executor request
// (executor.go). The W3C trace context travels in NATS headers (tracehdr).
package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Enabled reports whether an OTLP traces endpoint is configured
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) and
// OTEL_SDK_DISABLED is not true.
func Enabled() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// Setup returns the tracer provider of a process named service (the
// service.name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say
// otherwise) and its shutdown, which flushes the spans still batched.
// Without an endpoint it is a no-op provider: no span is recorded or sent,
// and the trace context a message carries still passes through unchanged.
// The exporter is OTLP over HTTP/protobuf, or gRPC when
// OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL is grpc; endpoint, headers, timeout,
// sampler (OTEL_TRACES_SAMPLER) and batching (OTEL_BSP_*) come from the
// standard variables.
func Setup(ctx context.Context, service string) (trace.TracerProvider, func(context.Context) error, error) {
	if !Enabled() {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	exp, err := exporter(ctx)
	if err != nil {
		return nil, nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(service)))
	if err != nil {
		res = resource.Default()
	}
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// exporter is the OTLP exporter of the protocol OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
// (else OTEL_EXPORTER_OTLP_PROTOCOL) names: http/protobuf (default) or grpc.
func exporter(ctx context.Context) (*otlptrace.Exporter, error) {
	v, p := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if p == "" {
		v, p = "OTEL_EXPORTER_OTLP_PROTOCOL", os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp *otlptrace.Exporter
	var err error
	switch strings.TrimSpace(p) {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("tracing: %s=%s: want http/protobuf or grpc", v, p)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w (check OTEL_EXPORTER_OTLP_ENDPOINT)", err)
	}
	return exp, nil
}
