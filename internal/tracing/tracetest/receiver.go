package tracetest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one span a Receiver got, with the service.name of the resource
// that sent it. Attrs holds the string-valued attributes (other kinds as
// their text form).
type Span struct {
	Service, Name, TraceID, SpanID, Parent string
	Attrs                                  map[string]string
}

// Receiver is an in-process OTLP/HTTP traces receiver: it decodes each
// ExportTraceServiceRequest posted to URL+"/v1/traces" as a collector
// would, and answers anything else with 400.
type Receiver struct {
	URL string

	mu    sync.Mutex
	spans []Span
}

// maxExport bounds one export body (after gunzip), so a runaway exporter
// cannot exhaust the test's memory.
const maxExport = 64 << 20

// Start serves a Receiver until t's cleanup.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "want POST /v1/traces", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(io.LimitReader(body, maxExport+1))
	var ex coltrace.ExportTraceServiceRequest
	if err == nil && len(data) > maxExport {
		http.Error(w, "export too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err == nil {
		err = proto.Unmarshal(data, &ex)
	}
	if err != nil {
		http.Error(w, "bad export: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.add(&ex)
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *Receiver) add(ex *coltrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range ex.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, Span{Service: service, Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()),
					SpanID: hex.EncodeToString(s.GetSpanId()), Parent: hex.EncodeToString(s.GetParentSpanId()), Attrs: attrs(s.GetAttributes())})
			}
		}
	}
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, a := range kvs {
		out[a.GetKey()] = anyText(a.GetValue())
	}
	return out
}

// Spans returns every span received so far, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// ByName returns the spans received so far, by name (the last of each).
func (r *Receiver) ByName() map[string]Span {
	out := map[string]Span{}
	for _, s := range r.Spans() {
		out[s.Name] = s
	}
	return out
}
