package httpingest

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// raw sends one request and returns its status, WWW-Authenticate and body.
func raw(t *testing.T, method, url string, hdr map[string]string, body []byte) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

// Issue 28 ("any local process reads every result"): without a credential
// the HTTP ingest neither publishes nor answers outcomes: 401 with a Bearer
// challenge, for POST and GET, with no token, a wrong one or another
// scheme, and the wrong token is not quoted back. Before, both answered
// with no credentials at all, GET with the tool's full result.
func TestIngest_without_a_credential_nothing_is_published_or_read(t *testing.T) {
	in := startIngest(t, nil, nil, nil)
	body := example(t, "valid-invoice.json")
	// The owner publishes and its call runs, so there is a result to steal.
	var a Accepted
	if code := do(t, "POST", in.url+RouteResponses, as("", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "secret-1"}), body, &a); code != http.StatusAccepted {
		t.Fatalf("POST with the token: %d %+v", code, a)
	}
	var o Outcomes
	if do(t, "GET", in.url+a.Outcomes+"?wait=50s&calls=1", as("", nil), nil, &o); len(o.Outcomes) != 1 {
		t.Fatalf("the owner reads its outcome: %+v", o)
	}
	const wrong = "Bearer not-the-token-0123456789"
	for _, c := range []struct {
		name, auth, challenge string
	}{
		{"no credential", "", `Bearer realm="toolgate"`},
		{"a wrong token", wrong, `Bearer realm="toolgate", error="invalid_token"`},
		{"basic auth", "Basic cHJvZHVjZXI6eA==", `Bearer realm="toolgate", error="invalid_token"`},
		{"an empty bearer", "Bearer ", `Bearer realm="toolgate", error="invalid_token"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "thief-1"}
			if c.auth != "" {
				hdr["Authorization"] = c.auth
			}
			for _, req := range []struct {
				method, path string
				body         []byte
			}{{"POST", RouteResponses, body}, {"GET", a.Outcomes, nil}, {"GET", a.Outcomes + "?wait=1s", nil}} {
				code, ch, got := raw(t, req.method, in.url+req.path, hdr, req.body)
				if code != http.StatusUnauthorized || ch != c.challenge || !strings.Contains(got, `"code":"unauthorized"`) {
					t.Fatalf("%s %s: %d, WWW-Authenticate %q, %s", req.method, req.path, code, ch, got)
				}
				if strings.Contains(got, "create_invoice") || strings.Contains(got, "not-the-token") || strings.Contains(got, token("")) {
					t.Fatalf("%s %s: the answer leaks a result or a token: %s", req.method, req.path, got)
				}
			}
		})
	}
	// Nothing was published under the thief's id.
	if code := do(t, "GET", in.url+"/v1/responses/thief-1/outcomes?wait=500ms", as("", nil), nil, &problem{}); code != http.StatusNotFound {
		t.Fatalf("thief-1 after the refused POSTs: %d, want 404 (nothing published)", code)
	}
}

// Issue 28: a producer reads only its own tenant's outcomes, as the NATS
// producer user of a tenant reads only toolgate.results.<tenant>.>; another
// tenant's response id answers exactly as an id nobody published (no
// existence oracle), and a credential may not name another tenant.
func TestIngest_a_producer_reads_only_its_tenants_outcomes_and_learns_nothing_of_others(t *testing.T) {
	in := startIngest(t, nil, []string{"acme", "globex"}, nil)
	var a Accepted
	if code := do(t, "POST", in.url+RouteResponses, as("acme", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "acme-inv-1"}),
		example(t, "valid-invoice.json"), &a); code != http.StatusAccepted {
		t.Fatalf("POST as acme: %d %+v", code, a)
	}
	var o Outcomes
	do(t, "GET", in.url+a.Outcomes+"?wait=50s&calls=1", as("acme", nil), nil, &o)
	if rs := results(t, o); len(rs) != 1 || rs[0].Status != "executed" {
		t.Fatalf("acme reads its own outcome: %+v", o)
	}
	// globex, the tenant-less producer and globex naming acme: acme's id
	// is as unknown as one nobody ever used, word for word.
	norm := func(s, rid string) string { return strings.ReplaceAll(s, rid, "RID") }
	for _, who := range []map[string]string{as("globex", nil), as("", nil)} {
		for _, q := range []string{"", "?wait=200ms"} {
			c1, _, theirs := raw(t, "GET", in.url+"/v1/responses/acme-inv-1/outcomes"+q, who, nil)
			c2, _, never := raw(t, "GET", in.url+"/v1/responses/never-used-1/outcomes"+q, who, nil)
			if c1 != http.StatusNotFound || c2 != http.StatusNotFound || norm(theirs, "acme-inv-1") != norm(never, "never-used-1") {
				t.Fatalf("another tenant's id %d %s; an unknown id %d %s", c1, theirs, c2, never)
			}
			if strings.Contains(theirs, "create_invoice") || strings.Contains(theirs, "executed") {
				t.Fatalf("acme's result leaked: %s", theirs)
			}
		}
	}
	var p problem
	if code := do(t, "GET", in.url+a.Outcomes, as("globex", map[string]string{"Toolgate-Tenant": "acme"}), nil, &p); code != http.StatusForbidden || p.Code != CodeForbidden {
		t.Fatalf("globex naming acme: %d %+v", code, p)
	}
	if code := do(t, "POST", in.url+RouteResponses, as("globex", map[string]string{"Toolgate-Tenant": "acme", "Toolgate-Provider": "openai-chat"}), example(t, "valid-invoice.json"), &p); code != http.StatusForbidden || p.Code != CodeForbidden {
		t.Fatalf("globex publishing as acme: %d %+v", code, p)
	}
}

// Issue 29: a GET for an id nobody ever published is 404, at once without
// ?wait= and after the wait with one; a response this ingest took is
// known at once, before any outcome. Before, 200 {"complete":false}.
func TestIngest_an_unknown_response_id_is_404(t *testing.T) {
	url, _ := bare(t, nil)
	var p problem
	for _, q := range []string{"", "?wait=100ms"} {
		if code := do(t, "GET", url+"/v1/responses/nope/outcomes"+q, as("", nil), nil, &p); code != http.StatusNotFound || p.Code != CodeNotFound || !strings.Contains(p.Error, "unknown") {
			t.Fatalf("GET nope%s: %d %+v", q, code, p)
		}
	}
	var a Accepted
	if code := do(t, "POST", url+RouteResponses, as("", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "taken-1"}), []byte(`{"choices":[]}`), &a); code != http.StatusAccepted {
		t.Fatalf("POST: %d %+v", code, a)
	}
	var o Outcomes
	if code := do(t, "GET", url+a.Outcomes, as("", nil), nil, &o); code != http.StatusOK || o.Complete {
		t.Fatalf("GET of a response just taken: %d %+v", code, o)
	}
}

var position = regexp.MustCompile(`line \d+, column \d+ \(byte offset \d+\)`)

// Issue 29: a cut response body (not well-formed JSON) with its provider
// named is 400 bad_request at once, saying where the decoder stopped, and
// is still recorded as the rejected response it is: its outcome comes as
// from NATS. Before, 202, and the rejection only showed later.
func TestIngest_malformed_json_is_400_with_its_position_and_still_recorded(t *testing.T) {
	in := startIngest(t, nil, nil, nil)
	full := example(t, "valid-invoice.json")
	cut := full[:len(full)/2]
	var p problem
	code := do(t, "POST", in.url+RouteResponses, as("", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "cut-1", "Content-Type": "application/json"}), cut, &p)
	if code != http.StatusBadRequest || p.Code != CodeBadRequest || !position.MatchString(p.Error) || !strings.Contains(p.Error, "not well-formed JSON") ||
		p.ResponseID != "cut-1" || p.Outcomes != "/v1/responses/cut-1/outcomes" {
		t.Fatalf("POST of a cut body: %d %+v", code, p)
	}
	var o Outcomes
	if code := do(t, "GET", in.url+p.Outcomes+"?wait=50s", as("", nil), nil, &o); code != http.StatusOK || !o.Complete || len(o.Outcomes) != 1 ||
		!strings.Contains(string(o.Outcomes[0]), `"status":"rejected"`) {
		t.Fatalf("the cut body's recorded rejection: %d %+v %s", code, o, o.Outcomes)
	}
}

// Issue 29: without Toolgate-Provider, an HTTP caller is told about the
// Toolgate-Provider header, once, not the CLI's `give --provider` with the
// list twice; a body that is not JSON says where it breaks.
func TestIngest_a_missing_provider_is_told_in_http_words(t *testing.T) {
	url, _ := bare(t, nil)
	for _, c := range []struct {
		name string
		body []byte
		says string
	}{
		{"unknown shape", []byte(`{"x":1}`), "saw keys x"},
		{"cut body", []byte("{\n  \"choices\": [{\"message\": {\"tool_calls\": [{\"function\": {\"arguments\": \"{\\\"a\\\":"), "line 2, column"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p problem
			code := do(t, "POST", url+RouteResponses, as("", nil), c.body, &p)
			if code != http.StatusBadRequest || !strings.Contains(p.Error, "the Toolgate-Provider header is not set") || !strings.Contains(p.Error, c.says) ||
				strings.Contains(p.Error, "--provider") || strings.Count(p.Error, "openai-responses") != 1 {
				t.Fatalf("%d %+v", code, p)
			}
		})
	}
}
