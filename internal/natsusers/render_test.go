package natsusers

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/internal/authz"
)

func TestRender_is_a_config_nats_server_loads_with_passwords_from_the_environment(t *testing.T) {
	conf, err := authz.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range authz.Names() {
		t.Setenv(authz.PasswordVar(u), "secret-"+u)
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte("listen: 127.0.0.1:-1\ninclude ./accounts.conf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "accounts.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pw := map[string]string{}
	for _, u := range authz.Names() {
		pw[u] = "secret-" + u
	}
	want, _ := Users(pw)
	if len(opts.Users) != len(want) {
		t.Fatalf("%d users loaded, want %d", len(opts.Users), len(want))
	}
	for i, u := range opts.Users {
		w := want[i]
		if u.Username != w.Username || u.Password != w.Password {
			t.Errorf("user %d = %s/%s, want %s/%s", i, u.Username, u.Password, w.Username, w.Password)
		}
		if (u.Permissions == nil) != (w.Permissions == nil) {
			t.Fatalf("user %s: permissions %v, want %v", u.Username, u.Permissions, w.Permissions)
		}
		if u.Permissions == nil {
			continue
		}
		for _, pair := range [][2]*server.SubjectPermission{{u.Permissions.Publish, w.Permissions.Publish}, {u.Permissions.Subscribe, w.Permissions.Subscribe}} {
			if !slices.Equal(pair[0].Allow, pair[1].Allow) || !slices.Equal(pair[0].Deny, pair[1].Deny) {
				t.Errorf("user %s: loaded %+v, want %+v", u.Username, pair[0], pair[1])
			}
		}
		if (u.Permissions.Response != nil) != (w.Permissions.Response != nil) {
			t.Errorf("user %s: allow_responses differs", u.Username)
		}
	}
}
