package stage

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/model"
	"github.com/toolgate/toolgate/streams"
)

func repairFlagsFrom(t *testing.T, env map[string]string, args ...string) (model.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	build := RepairFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return build()
}

func TestRepairFlags_environment_and_flags_make_the_model_config(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("sk-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want model.Config
	}{
		{"nothing set: no repair model", nil, nil, model.Config{}},
		{"environment", map[string]string{
			"TOOLGATE_REPAIR_PROTOCOL": "anthropic", "TOOLGATE_REPAIR_ENDPOINT": "https://api.anthropic.com",
			"TOOLGATE_REPAIR_MODEL": "claude-x", "TOOLGATE_REPAIR_API_KEY": "sk-env", "TOOLGATE_REPAIR_TIMEOUT": "5s",
			"TOOLGATE_REPAIR_MAX_RETRIES": "2",
		}, nil, model.Config{Protocol: "anthropic", Endpoint: "https://api.anthropic.com", Model: "claude-x", APIKey: "sk-env", Timeout: 5 * time.Second, MaxRetries: 2}},
		{"flags over environment, key from a file, zero retries means none", map[string]string{"TOOLGATE_REPAIR_ENDPOINT": "http://a/v1"},
			[]string{"--repair-endpoint", "http://127.0.0.1:8000/v1", "--repair-model", "qwen", "--repair-api-key-file", keyFile, "--repair-max-retries", "0"},
			model.Config{Protocol: "openai-chat", Endpoint: "http://127.0.0.1:8000/v1", Model: "qwen", APIKey: "sk-from-file", Timeout: DefaultRepairTimeout, MaxRetries: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := repairFlagsFrom(t, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("config %#v, want %#v (key %v)", got, tc.want, got.APIKey == tc.want.APIKey)
			}
		})
	}
}

func TestRepairFlags_mistakes_are_refused_without_showing_the_key(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"key without endpoint", map[string]string{"TOOLGATE_REPAIR_API_KEY": "sk-secret-1"}, "no endpoint"},
		{"model without endpoint", map[string]string{"TOOLGATE_REPAIR_MODEL": "m"}, "TOOLGATE_REPAIR_ENDPOINT"},
		{"both key sources", map[string]string{"TOOLGATE_REPAIR_API_KEY": "sk-secret-1", "TOOLGATE_REPAIR_API_KEY_FILE": "/nonexistent"}, "set only one"},
		{"bad timeout", map[string]string{"TOOLGATE_REPAIR_ENDPOINT": "http://a/v1", "TOOLGATE_REPAIR_API_KEY": "sk-secret-1", "TOOLGATE_REPAIR_TIMEOUT": "soon"}, "TOOLGATE_REPAIR_TIMEOUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := repairFlagsFrom(t, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "sk-secret-1") {
				t.Fatalf("err %v; want one naming %q and never the key", err, tc.want)
			}
		})
	}
}

func TestRepairBudget_stays_below_ack_wait(t *testing.T) {
	s := streams.DefaultSettings()
	s.AckWait = 30 * time.Second
	if b := repairBudget(s); b != 24*time.Second {
		t.Fatalf("budget %s, want 24s for a 30s AckWait", b)
	}
}
