package tracing_test

import (
	"context"
	"net"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tracing"
)

type grpcReceiver struct {
	coltrace.UnimplementedTraceServiceServer
	got chan string
}

func (g *grpcReceiver) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				g.got <- s.GetName()
			}
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports over OTLP/gRPC.
func TestSetup_grpc_protocol_exports_to_an_OTLP_gRPC_receiver(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rcv := &grpcReceiver{got: make(chan string, 16)}
	coltrace.RegisterTraceServiceServer(srv, rcv)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+l.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	tp, stop, err := tracing.Setup(context.Background(), "toolgate-test")
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "toolgate.parse")
	span.End()
	if err := stop(context.Background()); err != nil { // flushes the batch
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		select {
		case n := <-rcv.got:
			if n == "toolgate.parse" {
				return nil
			}
		default:
		}
		return context.DeadlineExceeded
	})
}
