package execute

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func req() Request {
	return Request{Tool: "charge", CallID: "resp-1-0", IdempotencyKey: "k123", Arguments: []byte(`{"amount":5}`)}
}

func TestHTTP_answers_by_status_code(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   Reply
		err    error
	}{
		{"ok_envelope", 200, nil, `{"ok":true,"result":{"id":"inv_1"}}`, Reply{OK: true, Result: []byte(`{"id":"inv_1"}`)}, nil},
		{"ok_false_envelope", 200, nil, `{"ok":false,"error":"card declined"}`, Reply{OK: false, Error: "card declined"}, nil},
		{"any_json_is_the_result", 201, nil, `{"invoice_id":"inv_2"}`, Reply{OK: true, Result: []byte(`{"invoice_id":"inv_2"}`)}, nil},
		{"json_array_is_the_result", 200, nil, `[1,2]`, Reply{OK: true, Result: []byte(`[1,2]`)}, nil},
		{"text_becomes_a_string", 200, nil, `done`, Reply{OK: true, Result: []byte(`"done"`)}, nil},
		{"empty_204", 204, nil, ``, Reply{OK: true}, nil},
		{"4xx_is_a_failed_call", 422, nil, `{"error":"amount too large"}`, Reply{OK: false, Error: `HTTP 422 Unprocessable Entity: {"error":"amount too large"}`}, nil},
		{"404_is_a_failed_call", 404, nil, `no such route`, Reply{OK: false, Error: "HTTP 404 Not Found: no such route"}, nil},
		{"500_is_unknown", 500, nil, `boom`, Reply{}, ErrUnknown},
		{"502_is_unknown", 502, nil, ``, Reply{}, ErrUnknown},
		{"503_without_retry_after_is_unknown", 503, nil, `overloaded`, Reply{}, ErrUnknown},
		{"503_with_retry_after_was_not_run", 503, map[string]string{"Retry-After": "2"}, `later`, Reply{}, ErrNotRun},
		{"429_was_not_run", 429, nil, `slow down`, Reply{}, ErrNotRun},
		{"redirect_is_not_followed", 302, map[string]string{"Location": "/elsewhere"}, ``, Reply{OK: false, Error: "HTTP 302 Found: (empty body)"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			got, err := (&HTTP{Allow: loopback(t), URL: srv.URL}).Execute(context.Background(), req())
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("error %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.OK != c.want.OK || string(got.Result) != string(c.want.Result) || got.Error != c.want.Error {
				t.Fatalf("reply %+v (result %s), want %+v (result %s)", got, got.Result, c.want, c.want.Result)
			}
		})
	}
}

func TestHTTP_sends_arguments_and_idempotency_headers(t *testing.T) {
	var body, key, tgKey, callID, ctype, method string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body, key, tgKey, callID = string(b), r.Header.Get("Idempotency-Key"), r.Header.Get("Toolgate-Idempotency-Key"), r.Header.Get("Toolgate-Call-Id")
		ctype, method = r.Header.Get("Content-Type"), r.Method
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	if _, err := (&HTTP{Allow: loopback(t), URL: srv.URL}).Execute(context.Background(), req()); err != nil {
		t.Fatal(err)
	}
	if method != "POST" || body != `{"amount":5}` || key != "k123" || tgKey != "k123" || callID != "resp-1-0" || ctype != "application/json" {
		t.Fatalf("got %s body=%q Idempotency-Key=%q Toolgate-Idempotency-Key=%q call=%q content-type=%q", method, body, key, tgKey, callID, ctype)
	}
}

func TestHTTP_connection_refused_was_not_run(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	_, err = (&HTTP{Allow: loopback(t), URL: "http://" + addr + "/charge"}).Execute(context.Background(), req())
	if !errors.Is(err, ErrNotRun) {
		t.Fatalf("error %v, want ErrNotRun (nothing was sent, retrying is safe)", err)
	}
}

func TestHTTP_unknown_host_was_not_run(t *testing.T) {
	_, err := (&HTTP{URL: "http://no-such-host.invalid/charge"}).Execute(context.Background(), req())
	if !errors.Is(err, ErrNotRun) {
		t.Fatalf("error %v, want ErrNotRun", err)
	}
}

func TestHTTP_timeout_after_sending_is_unknown(t *testing.T) {
	var got atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := (&HTTP{Allow: loopback(t), URL: srv.URL}).Execute(ctx, req())
	if !errors.Is(err, ErrUnknown) || errors.Is(err, ErrNotRun) {
		t.Fatalf("error %v, want ErrUnknown: the tool received the call", err)
	}
	if got.Load() != 1 {
		t.Fatalf("server saw %d requests, want 1", got.Load())
	}
}

func TestHTTP_connection_cut_mid_request_is_unknown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	_, err := (&HTTP{Allow: loopback(t), URL: srv.URL}).Execute(context.Background(), req())
	if !errors.Is(err, ErrUnknown) {
		t.Fatalf("error %v, want ErrUnknown", err)
	}
}

func TestHTTP_retry_after_is_passed_on(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(503)
	}))
	defer srv.Close()
	_, err := (&HTTP{Allow: loopback(t), URL: srv.URL}).Execute(context.Background(), req())
	if !errors.Is(err, ErrNotRun) || RetryAfter(err) != 7*time.Second {
		t.Fatalf("error %v, RetryAfter %v; want ErrNotRun after 7s", err, RetryAfter(err))
	}
}

func TestHTTP_status_url_answers_known_and_unknown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("idempotency_key") {
		case "k123":
			io.WriteString(w, `{"known":true,"ok":true,"result":{"id":"inv_1"}}`)
		case "gone":
			w.WriteHeader(404)
		default:
			io.WriteString(w, `{"known":false}`)
		}
	}))
	defer srv.Close()
	h := &HTTP{Allow: loopback(t), URL: srv.URL, StatusURL: srv.URL + "/status?tenant=a"}
	s, err := h.Status(context.Background(), req())
	if err != nil || !s.Known || !s.OK || string(s.Result) != `{"id":"inv_1"}` {
		t.Fatalf("status %+v, %v; want known ok", s, err)
	}
	for _, k := range []string{"other", "gone"} {
		r := req()
		r.IdempotencyKey = k
		if s, err := h.Status(context.Background(), r); err != nil || s.Known {
			t.Fatalf("%s: status %+v, %v; want known=false", k, s, err)
		}
	}
	if _, err := (&HTTP{Allow: loopback(t), URL: srv.URL}).Status(context.Background(), req()); !errors.Is(err, ErrNoStatus) {
		t.Fatalf("without status_url: %v, want ErrNoStatus", err)
	}
}

func TestHTTP_status_answer_without_known_field_is_no_answer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"ok":true,"result":"ran again?"}`)
	}))
	defer srv.Close()
	_, err := (&HTTP{Allow: loopback(t), URL: srv.URL, StatusURL: srv.URL}).Status(context.Background(), req())
	if !errors.Is(err, ErrNoStatus) || !strings.Contains(err.Error(), "known") {
		t.Fatalf("error %v, want ErrNoStatus naming the missing field", err)
	}
}
