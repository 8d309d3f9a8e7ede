package natsusers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/secrets"
)

// TestGenerated_passwords_load_even_when_their_bytes_spell_a_number: the
// rendered configuration reads each password from $VAR, and nats-server
// parses a variable's value as a literal, so a bare hex password such as
// "2e49…" (a float) or all digits broke the server's configuration.
func TestGenerated_passwords_load_even_when_their_bytes_spell_a_number(t *testing.T) {
	conf, err := authz.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range [][]byte{
		{0x2e, 0x49, 0xfe, 0x01, 0x23, 0x45, 0x67, 0x89, 0x01, 0x23, 0x45, 0x67, 0x89, 0x01, 0x23, 0x45},
		{0x12, 0x34, 0x56, 0x78, 0x90, 0x12, 0x34, 0x56, 0x78, 0x90, 0x12, 0x34, 0x56, 0x78, 0x90, 0x12},
		{0x1e, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
	} {
		pw := secrets.Password(raw)
		for _, u := range authz.Names() {
			t.Setenv(authz.PasswordVar(u), pw)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "nats.conf")
		if err := os.WriteFile(path, []byte("listen: 127.0.0.1:-1\ninclude ./accounts.conf\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "accounts.conf"), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		opts, err := server.ProcessConfigFile(path)
		if err != nil {
			t.Fatalf("password %s: the server refuses its configuration: %v", pw, err)
		}
		for _, u := range opts.Users {
			if u.Password != pw {
				t.Fatalf("password %s: user %s loaded %q", pw, u.Username, u.Password)
			}
		}
	}
}
