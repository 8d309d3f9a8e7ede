package stage

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/model"
	"github.com/toolgate/toolgate/internal/model/modelclient"
)

func TestRepairFlags_tokens_field_and_azure_from_env_and_flags(t *testing.T) {
	cfg, err := repairFlagsFrom(t, map[string]string{
		"TOOLGATE_REPAIR_ENDPOINT": "https://res.openai.azure.com", "TOOLGATE_REPAIR_MODEL": "dep",
		"TOOLGATE_REPAIR_TOKENS_FIELD": "max_completion_tokens", "TOOLGATE_REPAIR_AZURE": "true",
		"TOOLGATE_REPAIR_AZURE_API_VERSION": "2025-04-01-preview",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TokensField != model.TokensMaxCompletionTokens || !cfg.Azure || cfg.APIVersion != "2025-04-01-preview" {
		t.Errorf("cfg = %+v / %q %v %q", cfg, cfg.TokensField, cfg.Azure, cfg.APIVersion)
	}
	cfg, err = repairFlagsFrom(t, map[string]string{"TOOLGATE_REPAIR_ENDPOINT": "http://h/v1", "TOOLGATE_REPAIR_MODEL": "o3"},
		"--repair-tokens-field", "max_tokens", "--repair-azure=false")
	if err != nil || cfg.TokensField != model.TokensMaxTokens || cfg.Azure {
		t.Errorf("flags: %q %v %v", cfg.TokensField, cfg.Azure, err)
	}
	if _, err := repairFlagsFrom(t, map[string]string{"TOOLGATE_REPAIR_ENDPOINT": "http://h/v1", "TOOLGATE_REPAIR_MODEL": "m", "TOOLGATE_REPAIR_AZURE": "maybe"}); err == nil || !strings.Contains(err.Error(), "TOOLGATE_REPAIR_AZURE") {
		t.Errorf("--repair-azure=maybe: %v", err)
	}
	cfg, _ = repairFlagsFrom(t, map[string]string{"TOOLGATE_REPAIR_ENDPOINT": "http://h/v1", "TOOLGATE_REPAIR_MODEL": "m", "TOOLGATE_REPAIR_TOKENS_FIELD": "max_output"})
	if _, err := modelclient.NewClient(cfg, nil); err == nil || !strings.Contains(err.Error(), "TOOLGATE_REPAIR_TOKENS_FIELD") {
		t.Errorf("unknown tokens field: %v", err)
	}
}
