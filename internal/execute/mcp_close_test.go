package execute

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// deleteTripper records whether a DELETE (the SDK's session goodbye) was
// given up by the client: its round trip ended with the client's error.
type deleteTripper struct {
	next      http.RoundTripper
	abandoned atomic.Bool
}

func (d *deleteTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.next.RoundTrip(r)
	if r.Method == http.MethodDelete && err != nil {
		d.abandoned.Store(true)
	}
	return resp, err
}

// Before, a call whose answer was lost returned only after closing its
// session, whose DELETE the SDK waits on for up to 5s: a server still busy
// with the call held a 1s executor timeout open for 6s.
func TestMCP_http_lost_answer_returns_without_waiting_for_the_session_goodbye(t *testing.T) {
	release := make(chan struct{})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testMCPServer(serverOpts{release: release}) }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete { // a server that answers the goodbye late
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(release) }) // first: no handler outlives the test
	allow, err := ParseDestinations("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	m := &MCP{URL: hs.URL, Tool: "hang", Allow: allow}
	tr := &deleteTripper{next: m.Allow.Client().Transport}
	m.Allow.client = &http.Client{Transport: tr, CheckRedirect: m.Allow.Client().CheckRedirect}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := m.Execute(ctx, req()); !errors.Is(err, ErrUnknown) {
		t.Fatalf("got %v, want ErrUnknown", err)
	}
	if tr.abandoned.Load() {
		t.Fatal("the call returned only after its session's DELETE was given up: the goodbye was on the call's path")
	}
}
