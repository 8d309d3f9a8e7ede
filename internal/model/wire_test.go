package model

import (
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
		b, err := Encode(Config{Protocol: tc.p, Model: "m", MaxTokens: 10}, req)
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
	if _, err := Encode(cfg, Request{User: "u"}); err == nil {
		t.Error("no tool: want an error")
	}
	if _, err := Encode(cfg, Request{User: "u", Tool: Tool{Name: "t", Schema: []byte(`{"type":`)}}); err == nil {
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
		if got := EndpointURL(Config{Protocol: tc.p, Endpoint: tc.endpoint}); got != tc.want {
			t.Errorf("%s %s: got %s, want %s", tc.p, tc.endpoint, got, tc.want)
		}
	}
}
