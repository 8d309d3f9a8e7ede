package authz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

const committed = "../../deploy/base/nats-accounts.conf"

func TestRender_committed_file_is_current(t *testing.T) {
	want, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is stale: regenerate it with\n\tgo run ./services/toolgate authz render > deploy/base/nats-accounts.conf", committed)
	}
}

func TestRender_server_refuses_to_start_without_a_password(t *testing.T) {
	conf, _ := Render()
	path := filepath.Join(t.TempDir(), "accounts.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range Names() {
		if u != Executor {
			t.Setenv(PasswordVar(u), "x")
		}
	}
	os.Unsetenv(PasswordVar(Executor))
	_, err := server.ProcessConfigFile(path)
	if err == nil || !strings.Contains(err.Error(), PasswordVar(Executor)) {
		t.Fatalf("err = %v, want one naming %s", err, PasswordVar(Executor))
	}
}
