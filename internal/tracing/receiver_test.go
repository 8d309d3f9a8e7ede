package tracing_test

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// span is one span an OTLP receiver got, with the service that sent it.
type span struct {
	Service, Name, TraceID, SpanID, Parent string
	Attrs                                  map[string]string
}

// receiver is an in-process OTLP/HTTP traces receiver: it decodes each
// ExportTraceServiceRequest as a collector would.
type receiver struct {
	mu    sync.Mutex
	spans []span
	URL   string
}

func startReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		data, err := io.ReadAll(body)
		var ex coltrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(data, &ex)
		}
		if err != nil || req.URL.Path != "/v1/traces" {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		r.add(&ex)
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *receiver) add(ex *coltrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range ex.GetResourceSpans() {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				attrs := map[string]string{}
				for _, a := range s.GetAttributes() {
					attrs[a.GetKey()] = a.GetValue().GetStringValue()
				}
				r.spans = append(r.spans, span{Service: service, Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()),
					SpanID: hex.EncodeToString(s.GetSpanId()), Parent: hex.EncodeToString(s.GetParentSpanId()), Attrs: attrs})
			}
		}
	}
}

// byName returns the spans received so far, by name (the last of each).
func (r *receiver) byName() map[string]span {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]span{}
	for _, s := range r.spans {
		out[s.Name] = s
	}
	return out
}
