package modelclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/model"
)

func TestComplete_429_with_retry_after_then_success_waits_as_told(t *testing.T) {
	for _, p := range []model.Protocol{model.ProtocolOpenAIChat, model.ProtocolAnthropic} {
		t.Run(string(p), func(t *testing.T) {
			ok := openAIOK
			if p == model.ProtocolAnthropic {
				ok = anthropicOK
			}
			srv := newScripted(t,
				reply{status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"error":"slow down"}`},
				reply{status: 200, body: ok})
			c, sl := newTestClient(t, p, srv, nil)
			body, n, err := c.Complete(context.Background(), testRequest())
			if err != nil || string(body) != ok {
				t.Fatalf("Complete = %q, %v", body, err)
			}
			if n != 2 || len(srv.requests()) != 2 {
				t.Errorf("requests = %d (server saw %d), want 2", n, len(srv.requests()))
			}
			if w := sl.all(); len(w) != 1 || w[0] != 7*time.Second {
				t.Errorf("waits = %v, want [7s] from Retry-After", w)
			}
		})
	}
}

func TestComplete_retry_after_http_date_is_read_against_the_clock(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	srv := newScripted(t,
		reply{status: 503, header: map[string]string{"Retry-After": now.Add(4 * time.Second).Format(http.TimeFormat)}},
		reply{status: 200, body: openAIOK})
	sl := &sleeps{}
	c, err := NewClient(model.Config{Protocol: model.ProtocolOpenAIChat, Endpoint: srv.URL, Model: "m"}, srv.Client(),
		WithSleep(sl.sleep), WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	if _, n, err := c.Complete(context.Background(), testRequest()); err != nil || n != 2 {
		t.Fatalf("Complete: n=%d err=%v", n, err)
	}
	if w := sl.all(); len(w) != 1 || w[0] != 4*time.Second {
		t.Errorf("waits = %v, want [4s]", w)
	}
}

func TestComplete_500_every_time_gives_up_after_max_retries_plus_one(t *testing.T) {
	srv := newScripted(t, reply{status: 500, body: `{"error":"boom"}`})
	c, sl := newTestClient(t, model.ProtocolOpenAIChat, srv, func(c *model.Config) { c.MaxRetries = 2; c.MaxBackoff = 800 * time.Millisecond })
	_, n, err := c.Complete(context.Background(), testRequest())
	if n != 3 || len(srv.requests()) != 3 {
		t.Fatalf("requests = %d (server saw %d), want 3", n, len(srv.requests()))
	}
	var he *model.HTTPError
	if !errors.Is(err, model.ErrExhausted) || !errors.As(err, &he) || he.Status != 500 || !model.Retryable(err) {
		t.Fatalf("err = %v; want model.ErrExhausted wrapping model.HTTPError 500, retryable", err)
	}
	// Exponential with equal jitter: [250ms,500ms], then [400ms,800ms] (capped).
	backoffSchedule(t, sl.all(), 2, 800*time.Millisecond)
}

func TestComplete_400_is_permanent_and_not_retried(t *testing.T) {
	srv := newScripted(t, reply{status: 400, body: `{"error":{"message":"tool_choice not supported"}}`}, reply{status: 200, body: openAIOK})
	c, sl := newTestClient(t, model.ProtocolOpenAIChat, srv, nil)
	_, n, err := c.Complete(context.Background(), testRequest())
	var he *model.HTTPError
	if n != 1 || !errors.As(err, &he) || he.Status != 400 || model.Retryable(err) || errors.Is(err, model.ErrExhausted) {
		t.Fatalf("n=%d err=%v; want one request and a permanent model.HTTPError 400", n, err)
	}
	if !strings.Contains(err.Error(), "tool_choice not supported") || len(sl.all()) != 0 {
		t.Errorf("err = %v, waits = %v", err, sl.all())
	}
}

func TestComplete_retry_after_beyond_max_backoff_is_returned_not_waited(t *testing.T) {
	srv := newScripted(t, reply{status: 429, header: map[string]string{"Retry-After": "3600"}})
	c, sl := newTestClient(t, model.ProtocolAnthropic, srv, nil)
	_, n, err := c.Complete(context.Background(), testRequest())
	var he *model.HTTPError
	if n != 1 || !errors.As(err, &he) || he.RetryAfter != time.Hour || !model.Retryable(err) {
		t.Fatalf("n=%d err=%v; want the 429 at once with RetryAfter 1h", n, err)
	}
	if len(sl.all()) != 0 {
		t.Errorf("waited %v", sl.all())
	}
}

func TestComplete_hanging_server_times_out_after_bounded_requests(t *testing.T) {
	srv := newScripted(t, reply{hang: true})
	c, sl := newTestClient(t, model.ProtocolOpenAIChat, srv, func(c *model.Config) { c.Timeout = 50 * time.Millisecond; c.MaxRetries = 1 })
	_, n, err := c.Complete(context.Background(), testRequest())
	if n != 2 || len(srv.requests()) != 2 || !errors.Is(err, model.ErrTimeout) || !errors.Is(err, model.ErrExhausted) {
		t.Fatalf("n=%d (server saw %d) err=%v; want 2 requests ending in model.ErrExhausted wrapping ErrTimeout", n, len(srv.requests()), err)
	}
	backoffSchedule(t, sl.all(), 1, model.DefaultMaxBackoff)
}

// backoffSchedule checks waits are the retries' backoff, written out: before
// retry k (1-based), exponential from 500ms doubling up to max, drawn in
// its upper half ("equal jitter").
func backoffSchedule(t *testing.T, waits []time.Duration, retries int, max time.Duration) {
	t.Helper()
	if len(waits) != retries {
		t.Fatalf("waits = %v, want %d", waits, retries)
	}
	d := 500 * time.Millisecond
	for k, w := range waits {
		if k > 0 {
			d = min(2*d, max)
		}
		if w < d/2 || w > d {
			t.Errorf("wait before retry %d = %v, want within [%v, %v] (all: %v)", k+1, w, d/2, d, waits)
		}
	}
}

func TestComplete_connection_refused_is_retried_then_exhausted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// No server to count on: count the dials where they leave the client.
	var dials atomic.Int32
	tr := http.DefaultTransport.(*http.Transport).Clone()
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, address)
	}
	sl := &sleeps{}
	c, err := NewClient(model.Config{Protocol: model.ProtocolOpenAIChat, Endpoint: "http://" + addr + "/v1", Model: "m", MaxRetries: 2}, &http.Client{Transport: tr}, WithSleep(sl.sleep))
	if err != nil {
		t.Fatal(err)
	}
	_, n, err := c.Complete(context.Background(), testRequest())
	if n != 3 || dials.Load() != 3 || !errors.Is(err, model.ErrExhausted) || !model.Retryable(err) {
		t.Fatalf("n=%d (dialled %d) err=%v; want 3 requests, exhausted", n, dials.Load(), err)
	}
	backoffSchedule(t, sl.all(), 2, model.DefaultMaxBackoff)
}

func TestComplete_cancelled_context_stops_while_waiting(t *testing.T) {
	srv := newScripted(t, reply{status: 503})
	ctx, cancel := context.WithCancel(context.Background())
	c, err := NewClient(model.Config{Protocol: model.ProtocolOpenAIChat, Endpoint: srv.URL, Model: "m"}, srv.Client(),
		WithSleep(func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }))
	if err != nil {
		t.Fatal(err)
	}
	_, n, err := c.Complete(ctx, testRequest())
	if n != 1 || !errors.Is(err, context.Canceled) || errors.Is(err, model.ErrExhausted) {
		t.Fatalf("n=%d err=%v; want to stop after 1 request with context.Canceled", n, err)
	}
}

func TestComplete_cancelled_context_sends_nothing(t *testing.T) {
	srv := newScripted(t, reply{status: 200, body: openAIOK})
	c, _ := newTestClient(t, model.ProtocolOpenAIChat, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, n, err := c.Complete(ctx, testRequest())
	if n != 0 || len(srv.requests()) != 0 || !errors.Is(err, context.Canceled) || model.Retryable(err) {
		t.Fatalf("n=%d err=%v; want no request and context.Canceled", n, err)
	}
}

func TestComplete_api_key_echoed_by_server_is_redacted_from_errors(t *testing.T) {
	srv := newScripted(t, reply{status: 401, body: `{"error":"invalid key sk-test-secret-123"}`})
	c, _ := newTestClient(t, model.ProtocolAnthropic, srv, nil)
	_, _, err := c.Complete(context.Background(), testRequest())
	if err == nil || strings.Contains(err.Error(), "sk-test-secret-123") || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("err = %v; want the key redacted", err)
	}
}

func TestComplete_negative_max_retries_means_one_request(t *testing.T) {
	srv := newScripted(t, reply{status: 502})
	c, _ := newTestClient(t, model.ProtocolOpenAIChat, srv, func(c *model.Config) { c.MaxRetries = -1 })
	if _, n, err := c.Complete(context.Background(), testRequest()); n != 1 || !errors.Is(err, model.ErrExhausted) {
		t.Fatalf("n=%d err=%v", n, err)
	}
}
