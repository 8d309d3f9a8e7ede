package tracetest_test

import (
	"bytes"
	"net/http"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/internal/tracing/tracetest"
)

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// An export is decoded into spans with their service and hex ids; a body
// that is not an export is refused and adds nothing.
func TestReceiver_decodes_an_export_and_refuses_garbage(t *testing.T) {
	r := tracetest.Start(t)
	ex := &coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "toolgate-parse")}},
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
			Name: "toolgate.parse", TraceId: bytes.Repeat([]byte{0xab}, 16), SpanId: []byte{1, 2, 3, 4, 5, 6, 7, 8}, ParentSpanId: []byte{9, 9, 9, 9, 9, 9, 9, 9},
			Attributes: []*commonpb.KeyValue{str("toolgate.call.id", "c1"), {Key: "n", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 3}}}},
		}}}},
	}}}
	body, err := proto.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{body, []byte("\xff\xff not protobuf")} {
		resp, err := http.Post(r.URL+"/v1/traces", "application/x-protobuf", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[bool]int{true: 200, false: 400}[bytes.Equal(b, body)]; resp.StatusCode != want {
			t.Errorf("status %d, want %d", resp.StatusCode, want)
		}
	}
	spans := r.Spans()
	if len(spans) != 1 {
		t.Fatalf("got %d spans, want 1: %v", len(spans), spans)
	}
	s := r.ByName()["toolgate.parse"]
	if s.Service != "toolgate-parse" || s.TraceID != "abababababababababababababababab" || s.SpanID != "0102030405060708" || s.Parent != "0909090909090909" ||
		s.Attrs["toolgate.call.id"] != "c1" || s.Attrs["n"] != "3" {
		t.Errorf("span %+v", s)
	}
}
