package modelclient

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolgate/toolgate/internal/model"
)

func decodeBody(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, b)
	}
	return m
}

func TestComplete_openai_request_has_forced_function_choice_and_bearer_key(t *testing.T) {
	srv := newScripted(t, reply{status: 200, body: openAIOK})
	c, _ := newTestClient(t, model.ProtocolOpenAIChat, srv, nil)
	body, n, err := c.Complete(context.Background(), testRequest())
	if err != nil || n != 1 || string(body) != openAIOK {
		t.Fatalf("Complete = %q, %d, %v; want the scripted body after 1 request", body, n, err)
	}
	r := srv.requests()[0]
	if r.method != "POST" || r.path != "/v1/chat/completions" {
		t.Errorf("request = %s %s, want POST /v1/chat/completions", r.method, r.path)
	}
	if got := r.header.Get("Authorization"); got != "Bearer sk-test-secret-123" {
		t.Errorf("Authorization = %q", got)
	}
	if r.header.Get("x-api-key") != "" || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", r.header)
	}
	m := decodeBody(t, r.body)
	if m["model"] != "m" || m["max_tokens"] != float64(model.DefaultMaxTokens) {
		t.Errorf("model/max_tokens = %v/%v", m["model"], m["max_tokens"])
	}
	wantChoice := map[string]any{"type": "function", "function": map[string]any{"name": "create_invoice"}}
	if !reflect.DeepEqual(m["tool_choice"], wantChoice) {
		t.Errorf("tool_choice = %v, want %v", m["tool_choice"], wantChoice)
	}
	tools := m["tools"].([]any)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if len(tools) != 1 || tools[0].(map[string]any)["type"] != "function" || fn["name"] != "create_invoice" || fn["description"] != "Create an invoice" {
		t.Errorf("tools = %v", tools)
	}
	if req := fn["parameters"].(map[string]any)["required"].([]any); req[0] != "amount" {
		t.Errorf("parameters = %v", fn["parameters"])
	}
	msgs := m["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[0].(map[string]any)["content"] != "fix it" ||
		msgs[1].(map[string]any)["role"] != "user" || msgs[1].(map[string]any)["content"] != "the call was invalid" {
		t.Errorf("messages = %v", msgs)
	}
}

func TestComplete_anthropic_request_has_forced_tool_choice_and_version_header(t *testing.T) {
	srv := newScripted(t, reply{status: 200, body: anthropicOK})
	c, _ := newTestClient(t, model.ProtocolAnthropic, srv, func(c *model.Config) { c.Endpoint = srv.URL; c.MaxTokens = 300 })
	body, n, err := c.Complete(context.Background(), testRequest())
	if err != nil || n != 1 || string(body) != anthropicOK {
		t.Fatalf("Complete = %q, %d, %v", body, n, err)
	}
	r := srv.requests()[0]
	if r.path != "/v1/messages" {
		t.Errorf("path = %s, want /v1/messages", r.path)
	}
	if r.header.Get("x-api-key") != "sk-test-secret-123" || r.header.Get("anthropic-version") != model.AnthropicVersion {
		t.Errorf("x-api-key/anthropic-version = %q/%q", r.header.Get("x-api-key"), r.header.Get("anthropic-version"))
	}
	if r.header.Get("Authorization") != "" {
		t.Errorf("Authorization must not be sent to anthropic, got %q", r.header.Get("Authorization"))
	}
	m := decodeBody(t, r.body)
	if m["model"] != "m" || m["max_tokens"] != float64(300) || m["system"] != "fix it" {
		t.Errorf("model/max_tokens/system = %v/%v/%v", m["model"], m["max_tokens"], m["system"])
	}
	if !reflect.DeepEqual(m["tool_choice"], map[string]any{"type": "tool", "name": "create_invoice"}) {
		t.Errorf("tool_choice = %v", m["tool_choice"])
	}
	tool := m["tools"].([]any)[0].(map[string]any)
	if tool["name"] != "create_invoice" || tool["input_schema"].(map[string]any)["type"] != "object" {
		t.Errorf("tools = %v", m["tools"])
	}
	msgs := m["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
		t.Errorf("messages = %v (system goes in the top-level field)", msgs)
	}
}
