package tracing

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"
)

func TestSetup_off_without_an_endpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tp, stop, err := Setup(context.Background(), "toolgate-parse")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(noop.TracerProvider); !ok {
		t.Fatalf("provider %T, want the no-op one", tp)
	}
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	if Enabled() {
		t.Fatal("enabled with OTEL_SDK_DISABLED=true")
	}
}

func TestSetup_refuses_a_protocol_it_does_not_speak(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	if _, _, err := Setup(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "want http/protobuf or grpc") {
		t.Fatalf("err %v", err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	_, stop, err := Setup(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	_ = stop(context.Background())
}
