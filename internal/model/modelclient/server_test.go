package modelclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/model"
)

// reply is one scripted answer of the test server.
type reply struct {
	status int
	header map[string]string
	body   string
	hang   bool // wait until the client gives up
}

// recorded is one request the test server received.
type recorded struct {
	method, path string
	header       http.Header
	body         []byte
}

// scripted is an HTTP server that answers with the given replies in order
// (the last one repeats) and records every request.
type scripted struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newScripted(t *testing.T, replies ...reply) *scripted {
	t.Helper()
	s := &scripted{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, recorded{r.Method, r.URL.Path, r.Header.Clone(), b})
		s.mu.Unlock()
		rp := replies[min(n, len(replies)-1)]
		if rp.hang {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		for k, v := range rp.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rp.status)
		_, _ = io.WriteString(w, rp.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scripted) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// sleeps records the waits the client asked for, without waiting.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

const (
	openAIOK    = `{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"create_invoice","arguments":"{\"amount\":5}"}}]},"finish_reason":"tool_calls"}]}`
	anthropicOK = `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"create_invoice","input":{"amount":5}}],"stop_reason":"tool_use"}`
)

func testRequest() model.Request {
	return model.Request{
		System: "fix it",
		User:   "the call was invalid",
		Tool: model.Tool{
			Name:        "create_invoice",
			Description: "Create an invoice",
			Schema:      []byte(`{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}`),
		},
	}
}

// newTestClient builds a client for srv with waits recorded, not slept.
func newTestClient(t *testing.T, p model.Protocol, srv *scripted, mutate func(*model.Config)) (*Client, *sleeps) {
	t.Helper()
	cfg := model.Config{Protocol: p, Endpoint: srv.URL + "/v1", Model: "m", APIKey: "sk-test-secret-123"}
	if mutate != nil {
		mutate(&cfg)
	}
	sl := &sleeps{}
	c, err := NewClient(cfg, srv.Client(), WithSleep(sl.sleep))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c, sl
}
