package model

import (
	"fmt"
	"net/url"
	"strings"
)

// TokensField names the Chat Completions body field that carries
// Config.MaxTokens. OpenAI's reasoning models (o1, o3, o4-mini, ...) and the
// GPT-5 family refuse "max_tokens" with a 400 and require
// "max_completion_tokens"; most OpenAI-compatible servers (vLLM, llama.cpp,
// Ollama, older LiteLLM) know only "max_tokens".
type TokensField string

// The token field choices. TokensAuto (also the zero value) picks
// max_completion_tokens for the models that require it (NeedsCompletionTokens)
// and max_tokens for every other model.
const (
	TokensAuto                TokensField = "auto"
	TokensMaxTokens           TokensField = "max_tokens"
	TokensMaxCompletionTokens TokensField = "max_completion_tokens"
)

// DefaultAzureAPIVersion is the api-version sent to Azure OpenAI when neither
// Config.APIVersion nor the endpoint's query names one (a GA version).
const DefaultAzureAPIVersion = "2024-10-21"

// NeedsCompletionTokens reports whether an OpenAI model refuses max_tokens:
// the o-series (o1, o1-mini, o3, o3-mini, o4-mini, ...) and gpt-5*. A
// provider prefix such as "openai/" (LiteLLM, OpenRouter) is ignored.
func NeedsCompletionTokens(model string) bool {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if strings.HasPrefix(m, "gpt-5") {
		return true
	}
	if len(m) < 2 || m[0] != 'o' || m[1] < '1' || m[1] > '9' {
		return false
	}
	rest := strings.TrimLeft(m[1:], "0123456789")
	return rest == "" || rest[0] == '-'
}

// tokensField is the field name the OpenAI-chat body uses under cfg.
func tokensField(cfg Config) TokensField {
	switch cfg.TokensField {
	case TokensMaxTokens, TokensMaxCompletionTokens:
		return cfg.TokensField
	}
	if NeedsCompletionTokens(cfg.Model) {
		return TokensMaxCompletionTokens
	}
	return TokensMaxTokens
}

// IsAzureEndpoint reports whether endpoint is an Azure OpenAI resource
// (https://RESOURCE.openai.azure.com/...).
func IsAzureEndpoint(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	return strings.HasSuffix(strings.ToLower(u.Hostname()), ".openai.azure.com")
}

// AzureOpenAI reports whether c talks to Azure OpenAI: set explicitly, or
// detected from the endpoint's host.
func (c Config) AzureOpenAI() bool {
	return c.Protocol == ProtocolOpenAIChat && (c.Azure || IsAzureEndpoint(c.Endpoint))
}

// AzureURL builds the deployment URL
// https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT/chat/completions?api-version=V.
// The endpoint may be the resource root (the deployment is then Config.Model),
// the deployment URL, or the full chat/completions URL; an api-version in its
// query wins over Config.APIVersion only when the latter is empty.
func AzureURL(cfg Config) (string, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return "", fmt.Errorf("%w: endpoint %q: %v", ErrInvalidConfig, cfg.Endpoint, err)
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
	case strings.Contains(p, "/openai/deployments/"):
		p += "/chat/completions"
	default:
		if strings.ContainsAny(cfg.Model, "/?#") {
			return "", fmt.Errorf("%w: Azure deployment %q (TOOLGATE_REPAIR_MODEL) must not contain '/', '?' or '#'", ErrInvalidConfig, cfg.Model)
		}
		p += "/openai/deployments/" + url.PathEscape(cfg.Model) + "/chat/completions"
	}
	u.Path, u.RawPath = p, ""
	q := u.Query()
	if cfg.APIVersion != "" {
		q.Set("api-version", cfg.APIVersion)
	} else if q.Get("api-version") == "" {
		q.Set("api-version", DefaultAzureAPIVersion)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
