package run

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/httpingest"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/internal/testenv"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// TestUp_runs_the_http_ingest: `toolgate up --ingest-http ADDR` takes a
// response over HTTP, publishes it as the producer user (least privilege)
// and answers the long poll with its outcome — for a caller with the
// producer's bearer token, which up made in its secrets directory. Without
// it, POST and GET are 401 (issue 28: before, any local process read every
// result and published at will).
func TestUp_runs_the_http_ingest(t *testing.T) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))
	u := clitest.StartUp(t, "--ingest-http", addr)
	body := `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`
	send := func(method, path, token, body string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Toolgate-Provider", "openai-chat")
		req.Header.Set("Toolgate-Response-Id", "up-http-1")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, data
	}
	for _, m := range []struct{ method, path string }{{"POST", "/v1/responses"}, {"GET", "/v1/responses/up-http-1/outcomes"}} {
		if resp, data := send(m.method, m.path, "", body); resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("%s without a token: %s %s", m.method, resp.Status, data)
		}
	}
	token, err := secrets.Read(u.Secrets, httpingest.TokenFile("producer"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, data := send("POST", "/v1/responses", token, body); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST: %s %s", resp.Status, data)
	}
	resp, data := send("GET", "/v1/responses/up-http-1/outcomes?wait=50s", token, "")
	var o struct {
		Complete bool              `json:"complete"`
		Outcomes []json.RawMessage `json:"outcomes"`
	}
	if err := json.Unmarshal(data, &o); err != nil || !o.Complete || len(o.Outcomes) != 1 || !bytes.Contains(o.Outcomes[0], []byte(`"no_tool_calls"`)) {
		t.Fatalf("GET: %s %s (%v)", resp.Status, data, err)
	}
}
