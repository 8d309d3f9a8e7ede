package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// upTrust parses up's flags with args and runs their setup on fresh server
// options for host.
func upTrust(t *testing.T, host string, args ...string) (*server.Options, *LeastPrivilege, error) {
	t.Helper()
	uf := NewUpFlags(func(string) string { return "" })
	if err := uf.FS.Parse(args); err != nil {
		t.Fatal(err)
	}
	opts := &server.Options{Host: host, Port: testenv.FreePort(t)}
	lp, err := uf.trust.setup(opts, zerolog.Nop())
	return opts, lp, err
}

func TestUp_default_is_authenticated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	opts, lp, err := upTrust(t, "127.0.0.1", "--secrets", dir)
	if err != nil || lp == nil {
		t.Fatalf("plain up: %v, %v; want authenticated users", lp, err)
	}
	if opts.NoAuthUser != authz.Client || len(opts.Users) != len(authz.Names())+1 {
		t.Fatalf("no_auth_user %q, %d users", opts.NoAuthUser, len(opts.Users))
	}
	for _, u := range authz.Names() {
		st, err := os.Stat(filepath.Join(dir, authz.PasswordFile(u)))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("password of %s: %v %v", u, st, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, authz.PasswordFile(authz.Client))); err == nil {
		t.Error("the unauthenticated client's password is stored")
	}
	// A restart keeps the passwords: clients configured before connect after.
	_, again, err := upTrust(t, "127.0.0.1", "--secrets", dir, "--least-privilege")
	if err != nil {
		t.Fatal(err)
	}
	if again.passwords[authz.Admin] != lp.passwords[authz.Admin] || again.passwords[streams.Execute] != lp.passwords[streams.Execute] {
		t.Error("a restart changed the passwords")
	}

	// The server those options make refuses a wrong password and lets an
	// anonymous connection do nothing but publish responses.
	opts.JetStream, opts.StoreDir, opts.NoSigs = true, t.TempDir(), true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("not ready")
	}
	defer ns.Shutdown()
	if _, err := nats.Connect(ns.ClientURL(), nats.UserInfo(authz.Admin, "guess")); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("admin with a wrong password: %v", err)
	}
	anon, denied := clitest.Dial(t, ns.ClientURL())
	if _, err := anon.Request("$JS.API.STREAM.LIST", nil, time.Second); err == nil {
		t.Fatal("the anonymous client used the JetStream API")
	}
	denied.Of(t, "$JS.API.STREAM.LIST")
	t.Setenv("TOOLGATE_SECRETS", dir)
	t.Setenv("TOOLGATE_NATS_USER", "")
	nc, js, err := cmdutil.Connect(ns.ClientURL())
	if err != nil {
		t.Fatalf("the CLI finding the admin's password in %s: %v", dir, err)
	}
	defer nc.Close()
	if _, err := js.AccountInfo(t.Context()); err != nil {
		t.Fatalf("the CLI as admin: %v", err)
	}
}

func TestUp_insecure_refused_on_non_loopback(t *testing.T) {
	for _, host := range []string{"0.0.0.0", "", "192.0.2.10", "::"} {
		if _, _, err := upTrust(t, host, "--insecure", "--secrets", t.TempDir()); err == nil || !strings.Contains(err.Error(), "--insecure is refused") {
			t.Errorf("--insecure on %q: %v", host, err)
		}
	}
	opts, lp, err := upTrust(t, "127.0.0.1", "--insecure")
	if err != nil || lp != nil || len(opts.Users) != 0 {
		t.Fatalf("--insecure on loopback: %v %v %v", lp, opts.Users, err)
	}
	if _, _, err := upTrust(t, "127.0.0.1", "--insecure", "--least-privilege"); err == nil {
		t.Error("--insecure with --least-privilege: no error")
	}
	// Authenticated on another address, nobody gets in without a password.
	opts, _, err = upTrust(t, "0.0.0.0", "--secrets", t.TempDir())
	if err != nil || opts.NoAuthUser != "" {
		t.Fatalf("authenticated on 0.0.0.0: no_auth_user %q, %v", opts.NoAuthUser, err)
	}

	// A start attempt stops before any server listens.
	port := testenv.FreePort(t)
	err = Up([]string{"--insecure", "--listen", fmt.Sprintf("0.0.0.0:%d", port), "--http", "", "--data", t.TempDir(), "--secrets", t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "--insecure is refused") {
		t.Fatalf("toolgate up --insecure --listen 0.0.0.0: %v", err)
	}
}
