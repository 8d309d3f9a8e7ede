package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestUp_runs_the_http_ingest: `toolgate up --ingest-http ADDR` takes a
// response over HTTP, publishes it as the producer user (least privilege)
// and answers the long poll with its outcome.
func TestUp_runs_the_http_ingest(t *testing.T) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))
	startUp(t, "--ingest-http", addr)
	body := `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/responses", strings.NewReader(body))
	req.Header.Set("Toolgate-Provider", "openai-chat")
	req.Header.Set("Toolgate-Response-Id", "up-http-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST: %s %s", resp.Status, data)
	}
	resp, err = http.Get("http://" + addr + "/v1/responses/up-http-1/outcomes?wait=50s")
	if err != nil {
		t.Fatal(err)
	}
	data, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var o struct {
		Complete bool              `json:"complete"`
		Outcomes []json.RawMessage `json:"outcomes"`
	}
	if err := json.Unmarshal(data, &o); err != nil || !o.Complete || len(o.Outcomes) != 1 || !bytes.Contains(o.Outcomes[0], []byte(`"no_tool_calls"`)) {
		t.Fatalf("GET: %s %s (%v)", resp.Status, data, err)
	}
}
