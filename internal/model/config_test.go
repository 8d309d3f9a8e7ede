package model

import (
	"errors"
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
