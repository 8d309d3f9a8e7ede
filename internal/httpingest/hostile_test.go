package httpingest

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// bare is an HTTP ingest over an embedded server with toolgate's ingest
// stream only: enough for what is refused before or at publishing.
func bare(t *testing.T, adjust func(*Config)) (string, jetstream.Stream) {
	t.Helper()
	return bareIn(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"toolgate.in.>"}, Duplicates: time.Minute}, adjust)
}

// bareIn is bare with the ingest stream in.
func bareIn(t *testing.T, in jetstream.StreamConfig, adjust func(*Config)) (string, jetstream.Stream) {
	t.Helper()
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	st, err := js.CreateStream(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Sources: []Source{{Tenants: []string{AnyTenant}, JS: js}}, Credentials: credentials("")}
	if adjust != nil {
		adjust(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + l.Addr().String(), st
}

func TestIngest_bad_input_is_a_json_error_and_nothing_is_published(t *testing.T) {
	url, st := bare(t, func(c *Config) { c.MaxBody = 4096 })
	ok := map[string]string{"Toolgate-Provider": "openai-chat"}
	with := func(k, v string) map[string]string {
		return map[string]string{"Toolgate-Provider": "openai-chat", k: v}
	}
	body := []byte(`{"choices":[]}`)
	for _, c := range []struct {
		name, method, path string
		hdr                map[string]string
		body               []byte
		status             int
		says               string
	}{
		{"unknown provider", "POST", RouteResponses, map[string]string{"Toolgate-Provider": "gpt"}, body, 400, "unknown provider"},
		{"undetectable provider", "POST", RouteResponses, nil, []byte(`{"x":1}`), 400, "the Toolgate-Provider header is not set"},
		{"response id with a dot", "POST", RouteResponses, with("Toolgate-Response-Id", "a.b"), body, 400, "Toolgate-Response-Id"},
		{"dry run maybe", "POST", RouteResponses, with("Toolgate-Dry-Run", "maybe"), body, 400, "true or false"},
		{"negative max tokens", "POST", RouteResponses, with("Toolgate-Max-Tokens", "-1"), body, 400, "Toolgate-Max-Tokens"},
		{"huge end", "POST", RouteResponses, with("Toolgate-End", strings.Repeat("x", 300)), body, 400, "Toolgate-End"},
		{"end on a whole body", "POST", RouteResponses, with("Toolgate-End", "cut"), body, 400, "transcript"},
		{"bad content type", "POST", RouteResponses, with("Content-Type", "text/;;"), body, 400, "Content-Type"},
		{"empty body", "POST", RouteResponses, ok, nil, 400, "empty body"},
		{"body over the limit", "POST", RouteResponses, ok, []byte(strings.Repeat(" ", 5000)), 413, "4096 bytes"},
		{"broken transcript", "POST", RouteResponses, with("Content-Type", "text/event-stream"), []byte("event: x\n\n"), 400, "transcript"},
		{"bad wait", "GET", "/v1/responses/r1/outcomes?wait=soon", nil, nil, 400, "wait"},
		{"NaN wait", "GET", "/v1/responses/r1/outcomes?wait=NaN", nil, nil, 400, "wait"},
		{"bad calls", "GET", "/v1/responses/r1/outcomes?calls=-2", nil, nil, 400, "calls"},
		{"bad id", "GET", "/v1/responses/a%2Eb%20c/outcomes", nil, nil, 400, "response id"},
		{"wrong method", "PUT", RouteResponses, nil, nil, 405, "use POST"},
		{"no such route", "GET", "/v2/x", nil, nil, 404, "no such route"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p problem
			if code := do(t, c.method, url+c.path, as("", c.hdr), c.body, &p); code != c.status || !strings.Contains(p.Error, c.says) || p.Code == "" {
				t.Fatalf("%d %+v, want %d saying %q", code, p, c.status, c.says)
			}
		})
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Fatalf("%d messages published from bad requests", info.State.Msgs)
	}
}

func TestIngest_wait_is_bounded(t *testing.T) {
	url, _ := bare(t, func(c *Config) { c.MaxWait = 50 * time.Millisecond })
	var a Accepted
	if code := do(t, "POST", url+RouteResponses, as("", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "r1"}), []byte(`{"choices":[]}`), &a); code != http.StatusAccepted {
		t.Fatalf("POST: %d %+v", code, a)
	}
	var o Outcomes
	// An hour asked for is MaxWait served: the poll returns, empty (bare
	// runs no stage, so no outcome comes).
	if code := do(t, "GET", url+"/v1/responses/r1/outcomes?wait=1h", as("", nil), nil, &o); code != 200 || o.Complete || len(o.Outcomes) != 0 || o.Outcomes == nil {
		t.Fatalf("%d %+v", code, o)
	}
}

// TestIngest_a_client_that_never_finishes_its_headers_is_cut_off: the
// server closes the connection (ReadHeaderTimeout) instead of holding it.
func TestIngest_a_client_that_never_finishes_its_headers_is_cut_off(t *testing.T) {
	url, _ := bare(t, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("POST /v1/responses HTTP/1.1\r\nHost: x\r\nToolgate-Provider: openai-chat\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(ReadHeaderTimeout + 30*time.Second))
	_, err = bufio.NewReader(conn).ReadString('\n')
	// A 408 answer (err nil) is as good as a close; a read timeout is not.
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server still holds a connection whose headers never ended")
	}
}

func TestCache_keeps_one_copy_per_call_and_drops_the_oldest(t *testing.T) {
	c := newCache(time.Hour, 1<<20, 2, 2)
	c.add("r.a", []byte(`{"call_id":"a-0"}`))
	c.add("r.a", []byte(`{"call_id":"a-0","again":true}`))
	c.add("r.a", []byte(`{"call_id":"a-1"}`))
	c.add("r.a", []byte(`{"call_id":"a-2"}`)) // past maxEach
	c.add("r.a", []byte(`not json`))
	if v := c.peek("r.a"); v.Calls != 2 || len(v.Outcomes) != 2 || v.Dropped != 1 {
		t.Fatalf("r.a: %+v", v)
	}
	c.add("r.b", []byte(`{"response_id":"b"}`))
	c.add("r.c", []byte(`{"response_id":"c"}`)) // a third response: r.a goes
	if v := c.peek("r.a"); len(v.Outcomes) != 0 {
		t.Fatalf("r.a kept past MaxResponses: %+v", v)
	}
	if v := c.peek("r.c"); !v.Response || len(v.Outcomes) != 1 {
		t.Fatalf("r.c: %+v", v)
	}
	now := time.Now()
	c.now = func() time.Time { return now.Add(2 * time.Hour) }
	if v := c.peek("r.c"); len(v.Outcomes) != 0 || c.bytes != 0 {
		t.Fatalf("r.c kept past Keep: %+v, %d bytes", v, c.bytes)
	}
	// response_calls says how many calls make the response complete.
	c.now = time.Now
	c.add("r.e", []byte(`{"call_id":"e-0","response_calls":2}`))
	if v := c.peek("r.e"); v.Expected != 2 || v.complete(0) {
		t.Fatalf("r.e after one of two: %+v", v)
	}
	c.add("r.e", []byte(`{"call_id":"e-1","response_calls":2}`))
	if v := c.peek("r.e"); !v.complete(0) {
		t.Fatalf("r.e after both: %+v", v)
	}
	_, w := c.get("r.d")
	c.release("r.d", w)
	if len(c.waiters) != 0 {
		t.Fatal("a released waiter is kept")
	}
}

// TestIngest_a_body_the_ingest_stream_refuses_for_its_size_is_413: under
// the NATS max payload but over TOOLGATE_IN's max_msg_size (the body limit
// with its header room, streams.InMaxBody), the publish is refused for
// good: 413 too_large saying so, not 503 "retry", and nothing is stored.
func TestIngest_a_body_the_ingest_stream_refuses_for_its_size_is_413(t *testing.T) {
	url, st := bareIn(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"toolgate.in.>"}, Duplicates: time.Minute, MaxMsgSize: 2048}, nil)
	var p problem
	body := []byte(`{"choices":[],"pad":"` + strings.Repeat("x", 4096) + `"}`)
	code := do(t, "POST", url+RouteResponses, as("", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "r-big"}), body, &p)
	if code != http.StatusRequestEntityTooLarge || p.Code != CodeTooLarge || !strings.Contains(p.Error, "nothing was stored") {
		t.Fatalf("%d %+v, want 413 too_large saying nothing was stored", code, p)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Fatalf("%d messages stored", info.State.Msgs)
	}
}
