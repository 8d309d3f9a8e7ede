// Package model holds the repair model's configuration and the two wire
// protocols that cover nearly every LLM deployment: OpenAI-compatible Chat
// Completions ("openai-chat": OpenAI, vLLM, llama.cpp server, Ollama's /v1,
// LiteLLM) and Anthropic Messages ("anthropic"): a request offering one tool
// with the protocol's forced tool choice, encoded (Encode), and the errors a
// caller classifies (HTTPError, Retryable).
//
// The package is pure: no HTTP, no NATS, no Redis, no files (internal/arch
// checks what it links). The client that sends the requests, with its
// bounded retries, is internal/model/modelclient.
package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Protocol names a wire protocol. Its values match the provider names that
// internal/provider normalizes, so a response body can be read by the same code.
type Protocol string

// The supported protocols.
const (
	ProtocolOpenAIChat Protocol = "openai-chat"
	ProtocolAnthropic  Protocol = "anthropic"
)

// Defaults applied by Config.Validate to zero fields.
const (
	DefaultTimeout    = 30 * time.Second
	DefaultMaxRetries = 3
	DefaultMaxTokens  = 1024
	DefaultMaxBackoff = 20 * time.Second
)

// ErrInvalidConfig is wrapped by every error Validate returns.
var ErrInvalidConfig = errors.New("model: invalid configuration")

// Config says where and how to reach the model. APIKey is a secret: every
// way of printing or marshalling a Config (fmt verbs, MarshalJSON) shows only
// whether it is set.
type Config struct {
	Protocol Protocol
	// Endpoint is the base URL: "http://127.0.0.1:8080/v1" for OpenAI-style
	// servers (the client appends "/chat/completions" unless already
	// present), "https://api.anthropic.com" for Anthropic (the client
	// appends "/v1/messages", or "/messages" when the path ends in "/v1").
	Endpoint string
	Model    string
	// APIKey is optional (local servers need none); it is sent as
	// "Authorization: Bearer" (openai-chat) or "x-api-key" (anthropic).
	APIKey string `json:"-"`
	// Timeout bounds each HTTP request, default 30s.
	Timeout time.Duration
	// MaxRetries is how many times a retryable failure is retried: 0 means
	// the default 3, a negative value means no retry (one request only).
	MaxRetries int
	// MaxTokens is the output budget sent with the request, default 1024.
	MaxTokens int
	// TokensField names the openai-chat body field carrying MaxTokens:
	// "" or "auto" picks max_completion_tokens for o-series and gpt-5*
	// models, max_tokens otherwise (see NeedsCompletionTokens).
	TokensField TokensField
	// Azure selects Azure OpenAI for openai-chat: the key goes in an
	// "api-key" header and the URL is the deployment's chat/completions with
	// api-version. It is implied by an endpoint host *.openai.azure.com.
	// The endpoint is the resource (deployment = Model) or the deployment URL.
	Azure bool
	// APIVersion is Azure's api-version, default DefaultAzureAPIVersion (or
	// the one in the endpoint's query).
	APIVersion string
	// MaxBackoff caps one wait between requests, default 20s. A Retry-After
	// longer than this is not waited for: Complete returns the 429/503 at
	// once, with HTTPError.RetryAfter set, so the caller can redeliver later.
	MaxBackoff time.Duration
}

// Validate fills defaults into zero fields and checks the rest. Its errors
// wrap ErrInvalidConfig and name the environment variable to set.
func (c *Config) Validate() error {
	switch c.Protocol {
	case ProtocolOpenAIChat, ProtocolAnthropic:
	case "":
		return fmt.Errorf("%w: protocol is required (set TOOLGATE_REPAIR_PROTOCOL to %q or %q)", ErrInvalidConfig, ProtocolOpenAIChat, ProtocolAnthropic)
	default:
		return fmt.Errorf("%w: unknown protocol %q (set TOOLGATE_REPAIR_PROTOCOL to %q or %q)", ErrInvalidConfig, c.Protocol, ProtocolOpenAIChat, ProtocolAnthropic)
	}
	if c.Endpoint == "" {
		return fmt.Errorf("%w: endpoint is required (set TOOLGATE_REPAIR_ENDPOINT)", ErrInvalidConfig)
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: endpoint %q is not an http(s) URL such as http://127.0.0.1:8080/v1 (fix TOOLGATE_REPAIR_ENDPOINT)", ErrInvalidConfig, c.Endpoint)
	}
	if u.User != nil {
		return fmt.Errorf("%w: endpoint must not carry credentials; put the key in TOOLGATE_REPAIR_API_KEY or TOOLGATE_REPAIR_API_KEY_FILE", ErrInvalidConfig)
	}
	if c.Model == "" {
		return fmt.Errorf("%w: model is required (set TOOLGATE_REPAIR_MODEL)", ErrInvalidConfig)
	}
	if c.Timeout < 0 || c.MaxTokens < 0 || c.MaxBackoff < 0 {
		return fmt.Errorf("%w: timeout, max tokens and max backoff must not be negative", ErrInvalidConfig)
	}
	switch c.TokensField {
	case "", TokensAuto, TokensMaxTokens, TokensMaxCompletionTokens:
	default:
		return fmt.Errorf("%w: tokens field %q is not auto, max_tokens or max_completion_tokens (fix TOOLGATE_REPAIR_TOKENS_FIELD)", ErrInvalidConfig, c.TokensField)
	}
	if c.Azure && c.Protocol != ProtocolOpenAIChat {
		return fmt.Errorf("%w: Azure OpenAI needs protocol %q (TOOLGATE_REPAIR_PROTOCOL)", ErrInvalidConfig, ProtocolOpenAIChat)
	}
	if strings.ContainsAny(c.APIVersion, "&?#= \t\r\n") {
		return fmt.Errorf("%w: api-version %q is not a version such as %s (fix TOOLGATE_REPAIR_AZURE_API_VERSION)", ErrInvalidConfig, c.APIVersion, DefaultAzureAPIVersion)
	}
	if c.TokensField == "" {
		c.TokensField = TokensAuto
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	} else if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	return nil
}

// redacted is the printable and marshalable form of a Config.
type redacted struct {
	Protocol   Protocol      `json:"protocol"`
	Endpoint   string        `json:"endpoint"`
	Model      string        `json:"model"`
	APIKey     string        `json:"api_key"`
	Timeout    time.Duration `json:"timeout"`
	MaxRetries int           `json:"max_retries"`
	MaxTokens  int           `json:"max_tokens"`
	MaxBackoff time.Duration `json:"max_backoff"`
}

func (c Config) redacted() redacted {
	key := "unset"
	if c.APIKey != "" {
		key = "[redacted]"
	}
	return redacted{c.Protocol, c.Endpoint, c.Model, key, c.Timeout, c.MaxRetries, c.MaxTokens, c.MaxBackoff}
}

// String describes the Config with the API key hidden.
func (c Config) String() string {
	r := c.redacted()
	return fmt.Sprintf("{Protocol:%s Endpoint:%s Model:%s APIKey:%s Timeout:%s MaxRetries:%d MaxTokens:%d MaxBackoff:%s}",
		r.Protocol, r.Endpoint, r.Model, r.APIKey, r.Timeout, r.MaxRetries, r.MaxTokens, r.MaxBackoff)
}

// GoString is String with the type name, so %#v hides the key too.
func (c Config) GoString() string { return "model.Config" + c.String() }

// Format makes every fmt verb (%v, %+v, %#v, %s, %q, %x ...) print the
// redacted form, never the key.
func (c Config) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, c.GoString())
		return
	}
	fmt.Fprint(f, c.String())
}

// MarshalJSON writes the Config with the API key replaced by "[redacted]"
// (or "unset").
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.redacted()) }
