package stage

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/internal/health"
)

func TestMount_routes_beside_the_probes(t *testing.T) {
	h := Mount(health.Handler(func() error { return nil }, nil), func(mux *http.ServeMux) {
		mux.HandleFunc("/console/", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("console")) })
	})
	for path, want := range map[string]string{"/healthz": "ok\n", "/console/x": "console"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 || rec.Body.String() != want {
			t.Errorf("GET %s: %d %q, want %q", path, rec.Code, rec.Body.String(), want)
		}
	}
	if Mount(nil, nil) != nil {
		t.Error("no routes: want h itself")
	}
}
