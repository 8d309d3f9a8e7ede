package modelclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/model"
)

// strictOpenAI answers like OpenAI for a model that refuses max_tokens: a 400
// invalid_request_error when the body carries max_tokens, the tool call when
// it carries max_completion_tokens.
func strictOpenAI(t *testing.T) (*httptest.Server, func() []map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		bodies = append(bodies, m)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if _, ok := m["max_tokens"]; ok || m["max_completion_tokens"] == nil {
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`)
			return
		}
		_, _ = io.WriteString(w, openAIOK)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []map[string]any { mu.Lock(); defer mu.Unlock(); return append([]map[string]any(nil), bodies...) }
}

func TestComplete_reasoning_models_send_max_completion_tokens(t *testing.T) {
	for _, name := range []string{"o1", "o1-mini", "o3", "o3-mini-2025-01-31", "o4-mini", "gpt-5", "gpt-5-mini", "openai/gpt-5-nano"} {
		t.Run(name, func(t *testing.T) {
			srv, bodies := strictOpenAI(t)
			c, err := NewClient(model.Config{Protocol: model.ProtocolOpenAIChat, Endpoint: srv.URL + "/v1", Model: name, MaxTokens: 700}, srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			body, n, err := c.Complete(context.Background(), testRequest())
			if err != nil || n != 1 || string(body) != openAIOK {
				t.Fatalf("Complete: n=%d err=%v; the server refuses max_tokens for %s", n, err, name)
			}
			if got := bodies()[0]["max_completion_tokens"]; got != float64(700) {
				t.Errorf("max_completion_tokens = %v, want 700", got)
			}
		})
	}
}

func TestComplete_tokens_field_is_configurable(t *testing.T) {
	srv, bodies := strictOpenAI(t)
	// A deployment or proxy alias hides the model family: the operator says so.
	c, err := NewClient(model.Config{Protocol: model.ProtocolOpenAIChat, Endpoint: srv.URL + "/v1", Model: "my-reasoner", TokensField: model.TokensMaxCompletionTokens}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatalf("Complete with max_completion_tokens forced: %v", err)
	}
	// Forcing max_tokens on an o-series model sends it, and the server's 400
	// comes back permanent, with its message.
	c, err = NewClient(model.Config{Protocol: model.ProtocolOpenAIChat, Endpoint: srv.URL + "/v1", Model: "o3", TokensField: model.TokensMaxTokens}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	_, n, err := c.Complete(context.Background(), testRequest())
	var he *model.HTTPError
	if n != 1 || !errors.As(err, &he) || he.Status != 400 || !strings.Contains(err.Error(), "max_completion_tokens") {
		t.Fatalf("n=%d err=%v; want the 400 once", n, err)
	}
	if b := bodies()[1]; b["max_tokens"] != float64(model.DefaultMaxTokens) || b["max_completion_tokens"] != nil {
		t.Errorf("forced max_tokens body = %v", b)
	}
}

func TestComplete_other_models_keep_max_tokens(t *testing.T) {
	for _, name := range []string{"gpt-4o", "qwen2.5-7b", "ollama", "o", "omni-7b", "gpt-4.1"} {
		if model.NeedsCompletionTokens(name) {
			t.Errorf("NeedsCompletionTokens(%q) = true", name)
		}
	}
	srv := newScripted(t, reply{status: 200, body: openAIOK})
	c, _ := newTestClient(t, model.ProtocolOpenAIChat, srv, func(c *model.Config) { c.Model = "gpt-4o" })
	if _, _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatal(err)
	}
	m := decodeBody(t, srv.requests()[0].body)
	if m["max_tokens"] != float64(model.DefaultMaxTokens) || m["max_completion_tokens"] != nil {
		t.Errorf("body = %v; vLLM/llama.cpp know only max_tokens", m)
	}
}

func TestValidate_rejects_unknown_tokens_field_and_bad_api_version(t *testing.T) {
	for _, c := range []model.Config{
		{Protocol: model.ProtocolOpenAIChat, Endpoint: "http://h/v1", Model: "m", TokensField: "max_output_tokens"},
		{Protocol: model.ProtocolOpenAIChat, Endpoint: "http://h/v1", Model: "m", Azure: true, APIVersion: "1&x=2"},
		{Protocol: model.ProtocolAnthropic, Endpoint: "http://h", Model: "m", Azure: true},
	} {
		if err := c.Validate(); !errors.Is(err, model.ErrInvalidConfig) {
			t.Errorf("Validate(%v) = %v, want ErrInvalidConfig", c, err)
		}
	}
}

// strictAzure answers like Azure OpenAI: 401 without an api-key header (a
// Bearer token is not a key), 404 off the deployment path or without
// api-version, the tool call otherwise.
type strictAzure struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newStrictAzure(t *testing.T, deployment, key string) *strictAzure {
	t.Helper()
	s := &strictAzure{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Clone(context.Background()))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("api-key") != key {
			w.WriteHeader(401)
			_, _ = io.WriteString(w, `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}`)
			return
		}
		if r.URL.Path != "/openai/deployments/"+deployment+"/chat/completions" || r.URL.Query().Get("api-version") == "" {
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"error":{"code":"404","message":"Resource not found"}}`)
			return
		}
		_, _ = io.WriteString(w, openAIOK)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *strictAzure) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[len(s.seen)-1]
}

func TestComplete_azure_sends_api_key_to_the_deployment_url(t *testing.T) {
	srv := newStrictAzure(t, "repair-gpt4o", "azure-key-1")
	for _, tc := range []struct{ name, endpoint, version, want string }{
		{"resource root, deployment from model", srv.URL, "", model.DefaultAzureAPIVersion},
		{"deployment url", srv.URL + "/openai/deployments/repair-gpt4o/", "2025-04-01-preview", "2025-04-01-preview"},
		{"full url with api-version", srv.URL + "/openai/deployments/repair-gpt4o/chat/completions?api-version=2024-06-01", "", "2024-06-01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(model.Config{Protocol: model.ProtocolOpenAIChat, Endpoint: tc.endpoint, Model: "repair-gpt4o", APIKey: "azure-key-1", Azure: true, APIVersion: tc.version}, srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			if _, n, err := c.Complete(context.Background(), testRequest()); err != nil || n != 1 {
				t.Fatalf("Complete: n=%d err=%v", n, err)
			}
			r := srv.last()
			if r.Header.Get("Authorization") != "" {
				t.Errorf("Authorization sent to Azure: the key goes in api-key only")
			}
			if got := r.URL.Query().Get("api-version"); got != tc.want {
				t.Errorf("api-version = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestComplete_azure_is_detected_from_the_host: an endpoint on
// *.openai.azure.com is Azure without --repair-azure; the test dials the
// local server for that host name.
func TestComplete_azure_is_detected_from_the_host(t *testing.T) {
	srv := newStrictAzure(t, "dep1", "k")
	addr := srv.Listener.Addr().String()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	c, err := NewClient(model.Config{Protocol: model.ProtocolOpenAIChat, Endpoint: "http://myres.openai.azure.com", Model: "dep1", APIKey: "k"}, hc)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatalf("Complete against *.openai.azure.com: %v", err)
	}
	if h := srv.last().Host; h != "myres.openai.azure.com" {
		t.Errorf("Host = %q", h)
	}
}

func TestComplete_azure_rejects_a_deployment_with_a_slash(t *testing.T) {
	_, err := NewClient(model.Config{Protocol: model.ProtocolOpenAIChat, Endpoint: "https://r.openai.azure.com", Model: "a/../b", Azure: true}, nil)
	if !errors.Is(err, model.ErrInvalidConfig) {
		t.Fatalf("err = %v", err)
	}
}
