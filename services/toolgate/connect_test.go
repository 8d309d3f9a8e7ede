package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/internal/authz"
)

// TestCredentials_first_found_wins: the URL's, then TOOLGATE_NATS_USER's,
// then the secrets directory's password of the user asked for, else none.
func TestCredentials_first_found_wins(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, authz.PasswordFile(authz.Admin)), []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TOOLGATE_SECRETS": dir}
	getenv := func(k string) string { return env[k] }
	if c := credentialsFor("nats://u:p@127.0.0.1:4222", authz.Admin, getenv); c.user != "u" || c.password != nil {
		t.Errorf("URL: %+v", c)
	}
	if c := credentialsFor("nats://127.0.0.1:4222", authz.Admin, getenv); c.user != authz.Admin || c.password == nil || *c.password != "from-file" {
		t.Errorf("secrets directory: %+v", c)
	}
	if c := credentialsFor("nats://127.0.0.1:4222", authz.Producer, getenv); c.user != "" || c.looked != filepath.Join(dir, authz.PasswordFile(authz.Producer)) {
		t.Errorf("no producer password: %+v", c)
	}
	env["TOOLGATE_NATS_USER"], env["TOOLGATE_NATS_PASSWORD"] = "parse", "pw"
	if c := credentialsFor("nats://127.0.0.1:4222", authz.Admin, getenv); c.user != "parse" || *c.password != "pw" {
		t.Errorf("environment: %+v", c)
	}
}
