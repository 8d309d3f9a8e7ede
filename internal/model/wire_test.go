package model

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
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
	c, _ := newTestClient(t, ProtocolOpenAIChat, srv, nil)
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
	if m["model"] != "m" || m["max_tokens"] != float64(DefaultMaxTokens) {
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
	c, _ := newTestClient(t, ProtocolAnthropic, srv, func(c *Config) { c.Endpoint = srv.URL; c.MaxTokens = 300 })
	body, n, err := c.Complete(context.Background(), testRequest())
	if err != nil || n != 1 || string(body) != anthropicOK {
		t.Fatalf("Complete = %q, %d, %v", body, n, err)
	}
	r := srv.requests()[0]
	if r.path != "/v1/messages" {
		t.Errorf("path = %s, want /v1/messages", r.path)
	}
	if r.header.Get("x-api-key") != "sk-test-secret-123" || r.header.Get("anthropic-version") != AnthropicVersion {
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

func TestEncode_auto_choice_and_missing_schema(t *testing.T) {
	req := Request{User: "u", Tool: Tool{Name: "t"}, Choice: ChoiceAuto}
	for _, tc := range []struct {
		p          Protocol
		wantChoice any
		schemaKey  string
	}{
		{ProtocolOpenAIChat, "auto", "parameters"},
		{ProtocolAnthropic, map[string]any{"type": "auto"}, "input_schema"},
	} {
		b, err := encode(Config{Protocol: tc.p, Model: "m", MaxTokens: 10}, req)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeBody(t, b)
		if !reflect.DeepEqual(m["tool_choice"], tc.wantChoice) {
			t.Errorf("%s: tool_choice = %v, want %v", tc.p, m["tool_choice"], tc.wantChoice)
		}
		tool := m["tools"].([]any)[0].(map[string]any)
		if fn, ok := tool["function"].(map[string]any); ok {
			tool = fn
		}
		if !reflect.DeepEqual(tool[tc.schemaKey], map[string]any{"type": "object"}) {
			t.Errorf("%s: %s = %v, want the empty object schema", tc.p, tc.schemaKey, tool[tc.schemaKey])
		}
	}
}

func TestEncode_rejects_request_without_tool_or_with_broken_schema(t *testing.T) {
	cfg := Config{Protocol: ProtocolOpenAIChat, Model: "m"}
	if _, err := encode(cfg, Request{User: "u"}); err == nil {
		t.Error("no tool: want an error")
	}
	if _, err := encode(cfg, Request{User: "u", Tool: Tool{Name: "t", Schema: []byte(`{"type":`)}}); err == nil {
		t.Error("broken schema: want an error")
	}
}

func TestEndpointURL_appends_protocol_path_once(t *testing.T) {
	for _, tc := range []struct {
		p              Protocol
		endpoint, want string
	}{
		{ProtocolOpenAIChat, "http://h:8080/v1", "http://h:8080/v1/chat/completions"},
		{ProtocolOpenAIChat, "http://h:8080/v1/", "http://h:8080/v1/chat/completions"},
		{ProtocolOpenAIChat, "http://h/v1/chat/completions", "http://h/v1/chat/completions"},
		{ProtocolAnthropic, "https://api.anthropic.com", "https://api.anthropic.com/v1/messages"},
		{ProtocolAnthropic, "https://api.anthropic.com/v1", "https://api.anthropic.com/v1/messages"},
		{ProtocolAnthropic, "https://proxy/v1/messages", "https://proxy/v1/messages"},
	} {
		if got := endpointURL(Config{Protocol: tc.p, Endpoint: tc.endpoint}); got != tc.want {
			t.Errorf("%s %s: got %s, want %s", tc.p, tc.endpoint, got, tc.want)
		}
	}
}
