package keygen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

func TestInit_makes_every_secret_once_and_keeps_them(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	c := authz.Config{Groups: []authz.Group{{Name: "payments", Tools: []string{"create_invoice"}}}, Tenants: []string{"acme"}}
	if err := Init(dir, c); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, f := range Files(c) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if st, _ := os.Stat(filepath.Join(dir, f)); st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", f, st.Mode().Perm())
		}
		before[f] = string(b)
	}
	env := before[UsersEnv]
	for _, u := range c.Names() {
		pw := strings.TrimSpace(before[authz.PasswordFile(u)])
		if len(pw) != 34 || !strings.Contains(env, authz.PasswordVar(u)+"="+pw+"\n") {
			t.Errorf("%s: password %q, %s lacks it", u, pw, UsersEnv)
		}
	}
	if !strings.HasPrefix(before[ComposeEnv], env) || !strings.Contains(before[ComposeEnv], ComposeDirVar+"=") {
		t.Errorf("%s:\n%s", ComposeEnv, before[ComposeEnv])
	}
	if _, err := seal.Load(dir, streams.Names()); err != nil {
		t.Error(err)
	}
	if _, err := execute.LoadSigner(filepath.Join(dir, execute.SigningKeyFile)); err != nil {
		t.Error(err)
	}
	// Again: nothing rotates.
	if err := Init(dir, c); err != nil {
		t.Fatal(err)
	}
	for f, b := range before {
		if got, _ := os.ReadFile(filepath.Join(dir, f)); string(got) != b {
			t.Errorf("%s changed on the second run", f)
		}
	}
	if err := Init(dir, authz.Config{Tenants: []string{"Not.Valid"}}); err == nil {
		t.Error("an invalid configuration was accepted")
	}
}
