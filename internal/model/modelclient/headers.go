package modelclient

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/internal/model"
)

// maxErrorBody bounds how much of an error response is kept in an
// HTTPError.
const maxErrorBody = 512

// setHeaders writes the protocol's content type and authentication headers.
func setHeaders(h http.Header, cfg model.Config) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	switch cfg.Protocol {
	case model.ProtocolAnthropic:
		h.Set("anthropic-version", model.AnthropicVersion)
		if cfg.APIKey != "" {
			h.Set("x-api-key", cfg.APIKey)
		}
	default:
		setAuth(h, cfg)
	}
}

// setAuth writes the OpenAI-chat authentication header: Azure's "api-key",
// else "Authorization: Bearer".
func setAuth(h http.Header, cfg model.Config) {
	if cfg.APIKey == "" {
		return
	}
	if cfg.AzureOpenAI() {
		h.Set("api-key", cfg.APIKey)
		return
	}
	h.Set("Authorization", "Bearer "+cfg.APIKey)
}

// redact replaces every occurrence of key in s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
