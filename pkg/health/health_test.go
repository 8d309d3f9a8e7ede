package health

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHandler_ready_follows_check(t *testing.T) {
	var err error
	h := Handler(func() error { return err }, nil)
	get := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	if get("/healthz") != 200 || get("/readyz") != 200 {
		t.Fatal("want 200 on both probes when ready")
	}
	err = errors.New("nats disconnected")
	if get("/readyz") != 503 {
		t.Fatal("want 503 on /readyz when not ready")
	}
	if get("/healthz") != 200 {
		t.Fatal("liveness must not follow readiness")
	}
}
