package health

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
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

func TestListen_taken_address_says_so(t *testing.T) {
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = Listen(l.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Fatalf("got %v, want the address and \"address already in use\"", err)
	}
}
