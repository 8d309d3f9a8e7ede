package run

import (
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/secrets"

	"github.com/toolgate/toolgate/internal/cli/tools"
)

// startUpServer is the NATS server toolgate up embeds, run in the test's own
// process so the test reads the server's side of every connection: up's
// users (least privilege, passwords in the returned secrets directory), its
// streams and the example tools.
func startUpServer(t *testing.T) (ns *server.Server, natsURL, secretsDir string) {
	t.Helper()
	secretsDir = filepath.Join(t.TempDir(), "secrets")
	opts, lp, err := upTrust(t, "127.0.0.1", "--secrets", secretsDir)
	if err != nil || lp == nil {
		t.Fatalf("up's users: %v, %v", lp, err)
	}
	opts.JetStream, opts.StoreDir, opts.NoSigs, opts.MaxPayload = true, t.TempDir(), true, 16<<20
	ns, err = server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("embedded NATS not ready")
	}
	t.Cleanup(ns.Shutdown)
	if err := tools.ToolsApply([]string{"--nats", lp.AdminURL(ns.ClientURL()), "-f", "../../../examples/tools.yaml"}, tools.ToolsIO{Out: io.Discard, Err: io.Discard}); err != nil {
		t.Fatalf("streams and the example tools: %v", err)
	}
	// And the console's token file up keeps beside the passwords: one
	// operator (for a console that asks to log in).
	if _, err := secrets.Ensure(secretsDir, "console-tokens", func() ([]byte, error) {
		pw, err := secrets.Random(16)()
		return append([]byte("operator operator "), pw...), err
	}); err != nil {
		t.Fatal(err)
	}
	return ns, ns.ClientURL(), secretsDir
}

// onlyConsoleConnected checks, on the server's side, that every client
// connected to ns is the console, authenticated as the console user (not
// the admin whose password sits beside the console's).
func onlyConsoleConnected(t *testing.T, ns *server.Server) {
	t.Helper()
	cz, err := ns.Connz(&server.ConnzOptions{Username: true})
	if err != nil {
		t.Fatal(err)
	}
	users := map[string][]string{} // connection name -> users
	for _, c := range cz.Conns {
		users[c.Name] = append(users[c.Name], c.AuthorizedUser)
	}
	got := users["toolgate console"]
	if len(got) == 0 || len(users) != 1 || slices.ContainsFunc(got, func(u string) bool { return u != authz.Console }) {
		t.Fatalf("connected users by connection name: %v, want only \"toolgate console\" as %s", users, authz.Console)
	}
}
