package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestValidate_fills_defaults(t *testing.T) {
	c := Config{Protocol: ProtocolAnthropic, Endpoint: "https://api.anthropic.com", Model: "claude"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Timeout != DefaultTimeout || c.MaxRetries != DefaultMaxRetries || c.MaxTokens != DefaultMaxTokens || c.MaxBackoff != DefaultMaxBackoff {
		t.Errorf("defaults not filled: %v", c)
	}
}

func TestValidate_rejects_bad_fields_naming_what_to_set(t *testing.T) {
	ok := Config{Protocol: ProtocolOpenAIChat, Endpoint: "http://127.0.0.1:8080/v1", Model: "qwen"}
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"no protocol", func(c *Config) { c.Protocol = "" }, "TOOLGATE_REPAIR_PROTOCOL"},
		{"unknown protocol", func(c *Config) { c.Protocol = "gemini" }, `unknown protocol "gemini"`},
		{"no endpoint", func(c *Config) { c.Endpoint = "" }, "endpoint is required (set TOOLGATE_REPAIR_ENDPOINT)"},
		{"endpoint without scheme", func(c *Config) { c.Endpoint = "127.0.0.1:8080" }, "not an http(s) URL"},
		{"endpoint ftp", func(c *Config) { c.Endpoint = "ftp://h/v1" }, "not an http(s) URL"},
		{"endpoint with credentials", func(c *Config) { c.Endpoint = "http://u:p@h/v1" }, "must not carry credentials"},
		{"no model", func(c *Config) { c.Model = "" }, "TOOLGATE_REPAIR_MODEL"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mutate(&c)
			err := c.Validate()
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalidConfig containing %q", err, tc.want)
			}
		})
	}
}

func TestConfig_api_key_never_printed_or_marshalled(t *testing.T) {
	const key = "sk-ant-very-secret"
	c := Config{Protocol: ProtocolAnthropic, Endpoint: "https://api.anthropic.com", Model: "claude", APIKey: key}
	cl, err := NewClient(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{"json": string(js)}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		outs["config "+verb] = fmt.Sprintf(verb, c)
		outs["*config "+verb] = fmt.Sprintf(verb, &c)
		outs["client "+verb] = fmt.Sprintf(verb, cl)
	}
	outs["nested"] = fmt.Sprintf("%+v", struct{ Repair Config }{c})
	for name, out := range outs {
		if strings.Contains(out, key) {
			t.Errorf("%s prints the key: %s", name, out)
		}
		if !strings.Contains(out, "[redacted]") {
			t.Errorf("%s does not say the key is set: %s", name, out)
		}
	}
	if !strings.Contains(outs["config %+v"], "Model:claude") {
		t.Errorf("%%+v lost the other fields: %s", outs["config %+v"])
	}
}
