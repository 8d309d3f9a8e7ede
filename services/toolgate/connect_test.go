package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/internal/cli/run"
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
	if c := cmdutil.CredentialsFor("nats://u:p@127.0.0.1:4222", authz.Admin, getenv); c.User != "u" || c.Password != nil {
		t.Errorf("URL: %+v", c)
	}
	if c := cmdutil.CredentialsFor("nats://127.0.0.1:4222", authz.Admin, getenv); c.User != authz.Admin || c.Password == nil || *c.Password != "from-file" {
		t.Errorf("secrets directory: %+v", c)
	}
	if c := cmdutil.CredentialsFor("nats://127.0.0.1:4222", authz.Producer, getenv); c.User != "" || c.Looked != filepath.Join(dir, authz.PasswordFile(authz.Producer)) {
		t.Errorf("no producer password: %+v", c)
	}
	env["TOOLGATE_NATS_USER"], env["TOOLGATE_NATS_PASSWORD"] = "parse", "pw"
	if c := cmdutil.CredentialsFor("nats://127.0.0.1:4222", authz.Admin, getenv); c.User != "parse" || *c.Password != "pw" {
		t.Errorf("environment: %+v", c)
	}
}

// leastPrivServer runs an embedded server with toolgate up's users (an
// unauthenticated local client may only publish responses) and its
// streams, applied as the admin; it returns the URL and the secrets
// directory holding the passwords.
func leastPrivServer(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	var lp *run.LeastPrivilege
	srv := testenv.RunJetStream(t, func(o *server.Options) {
		var err error
		if lp, err = run.NewLeastPrivilege(o, authz.DefaultConfig(), dir, true); err != nil {
			t.Fatal(err)
		}
	})
	nc, js, err := cmdutil.ConnectAs(lp.AdminURL(srv.ClientURL()), authz.Admin)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := streams.Ensure(t.Context(), js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	return srv.ClientURL(), dir
}

// Before, `calls ls` without credentials waited out its 30 s deadline and
// printed a bare permissions violation (or a context deadline); nothing
// named the admin user or its password file. Now the first refused request
// ends the command, and the error says where the password is looked for.
func TestOperatorCommand_without_credentials_stops_at_the_first_refusal_and_says_what_to_do(t *testing.T) {
	url, secretsDir := leastPrivServer(t)
	empty := t.TempDir() // no password files: the CLI connects without credentials
	env := []string{"TOOLGATE_SECRETS=" + empty, "TOOLGATE_NATS_USER=", "TOOLGATE_NATS_PASSWORD="}
	for _, args := range [][]string{
		{"calls", "ls", "--nats", url},
		{"approvals", "ls", "--nats", url},
		{"streams", "apply", "--nats", url},
	} {
		out, code := clitest.RunMain(t, env, args...)
		if code != 1 {
			t.Fatalf("toolgate %v: exit %d, want 1:\n%s", args, code, out)
		}
		for _, want := range []string{"permissions violation", "user admin", filepath.Join(empty, authz.PasswordFile(authz.Admin)), "TOOLGATE_SECRETS", "TOOLGATE_NATS_USER=admin"} {
			if !strings.Contains(out, want) {
				t.Errorf("toolgate %v does not say %q:\n%s", args, want, out)
			}
		}
		if strings.Contains(out, "deadline exceeded") || strings.Contains(out, "timeout") {
			t.Errorf("toolgate %v waited out its deadline instead of stopping at the refusal:\n%s", args, out)
		}
	}
	// A user that may not is told which one the command needs.
	pw, err := os.ReadFile(filepath.Join(secretsDir, authz.PasswordFile(authz.Producer)))
	if err != nil {
		t.Fatal(err)
	}
	out, code := clitest.RunMain(t, []string{"TOOLGATE_SECRETS=" + empty, "TOOLGATE_NATS_USER=" + authz.Producer, "TOOLGATE_NATS_PASSWORD=" + strings.TrimSpace(string(pw))}, "calls", "ls", "--nats", url)
	if code != 1 || !strings.Contains(out, "connected as user producer") || !strings.Contains(out, "needs user admin") || strings.Contains(out, "deadline exceeded") {
		t.Errorf("as the producer: exit %d:\n%s", code, out)
	}
}
