package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/fake"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

// The Secrets the chart generates are what toolgate reads: the bundled
// nats-server loads the chart's configuration with their passwords, every
// sealing stage's key parses, the signing key parses, and no two installs
// share a password.
func TestHelm_generated_secrets_are_what_toolgate_reads(t *testing.T) {
	want, err := authz.Render()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(chartDir, "files", "nats-accounts.conf")); err != nil || string(b) != want {
		t.Fatalf("%s/files/nats-accounts.conf differs from authz.Render() (%v): cp deploy/base/nats-accounts.conf %s/files/ after make generate", chartDir, err, chartDir)
	}
	r := helmRender(t)
	users, sealKeys, signing := r.secrets["toolgate-nats-users"], r.secrets["toolgate-seal-keys"], r.secrets["toolgate-exec-signing"]
	if users == nil || sealKeys == nil || signing == nil {
		t.Fatalf("generated Secrets missing: have %v", keys(r.secrets))
	}
	var vars []string
	for _, u := range authz.Names() {
		vars = append(vars, authz.PasswordVar(u))
	}
	if got := keys(users.Data); !slices.Equal(got, slices.Sorted(slices.Values(vars))) {
		t.Errorf("toolgate-nats-users has %v, want every user's %v", got, vars)
	}
	for _, st := range seal.Needed(streams.Names()) {
		if _, err := seal.ParseKeys(sealKeys.Data[seal.FileName(st)]); err != nil {
			t.Errorf("%s: %v", seal.FileName(st), err)
		}
	}
	if _, err := execute.ParseSigningKeys(signing.Data[execute.SigningKeyFile]); err != nil {
		t.Errorf("%s: %v", execute.SigningKeyFile, err)
	}
	// The bundled NATS as its pods see it.
	root := t.TempDir()
	for rel, data := range map[string]string{
		"nats-config/nats.conf":            r.configMaps["nats-config"].Data["nats.conf"],
		"nats-accounts/nats-accounts.conf": r.configMaps["nats-accounts"].Data["nats-accounts.conf"],
	} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("POD_NAME", "nats-0")
	for k, v := range users.Data {
		if !strings.HasPrefix(string(v), "tg") || len(v) != 34 {
			t.Errorf("%s = %q, want tg and 32 hex digits (secrets.Password)", k, v)
		}
		t.Setenv(k, string(v))
	}
	opts, err := server.ProcessConfigFile(filepath.Join(root, "nats-config/nats.conf"))
	if err != nil {
		t.Fatalf("nats-server refuses the chart's configuration and passwords: %v", err)
	}
	if opts.NoAuthUser != "" || len(opts.Users) != len(authz.Names()) || !opts.SyncAlways {
		t.Errorf("no_auth_user %q, %d users, sync always %v", opts.NoAuthUser, len(opts.Users), opts.SyncAlways)
	}
	for _, u := range opts.Users {
		if u.Password != string(users.Data[authz.PasswordVar(u.Username)]) {
			t.Errorf("user %s: the server's password is not the Secret's", u.Username)
		}
	}
	// Another install makes other secrets.
	other := helmRender(t)
	for _, name := range generatedSecrets() {
		for k, v := range r.secrets[name].Data {
			if bytes.Equal(v, other.secrets[name].Data[k]) {
				t.Errorf("%s %s is the same in two installs", name, k)
			}
		}
	}
}

// cluster is a Kubernetes API holding objs, for the templates' lookup.
type cluster struct{ client dynamic.Interface }

func (c cluster) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false, err
	}
	return c.client.Resource(gv.WithResource(strings.ToLower(kind) + "s")), true, nil
}

func newCluster(t *testing.T, secrets map[string]*corev1.Secret) cluster {
	t.Helper()
	var objs []runtime.Object
	for _, s := range secrets {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
	return cluster{fake.NewSimpleDynamicClient(runtime.NewScheme(), objs...)}
}

// An upgrade keeps every generated password and key (the chart reads them
// back with lookup), and makes only what is missing.
func TestHelm_upgrade_keeps_the_generated_secrets(t *testing.T) {
	first := helmRender(t)
	installed := map[string]*corev1.Secret{}
	for _, name := range generatedSecrets() {
		installed[name] = first.secrets[name]
	}
	delete(installed["toolgate-nats-users"].Data, "TOOLGATE_NATS_PASSWORD_CONSOLE") // a user added since
	upgraded := helmRenderIn(t, newCluster(t, installed))
	for _, name := range generatedSecrets() {
		for k, v := range installed[name].Data {
			if !bytes.Equal(upgraded.secrets[name].Data[k], v) {
				t.Errorf("the upgrade rotated %s %s", name, k)
			}
		}
	}
	if v := upgraded.secrets["toolgate-nats-users"].Data["TOOLGATE_NATS_PASSWORD_CONSOLE"]; len(v) != 34 {
		t.Errorf("the missing password was not made: %q", v)
	}
}

// With secrets.existing the chart makes none of those Secrets and every
// pod reads the operator's.
func TestHelm_existing_secrets_are_read_and_not_rendered(t *testing.T) {
	r := helmRender(t, "secrets.existing.natsUsers=ops-nats-users", "secrets.existing.sealKeys=ops-seal-keys",
		"secrets.existing.execSigning=ops-exec-signing", "secrets.existing.credentials=ops-credentials")
	if len(r.secrets) != 0 {
		t.Errorf("Secrets rendered: %v", keys(r.secrets))
	}
	refs := map[string]bool{}
	for name, pod := range r.pods() {
		for _, c := range pod.Containers {
			for _, e := range c.EnvFrom {
				if e.SecretRef != nil {
					refs[e.SecretRef.Name] = true
				}
			}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					refs[e.ValueFrom.SecretKeyRef.Name] = true
				}
			}
		}
		for _, v := range pod.Volumes {
			if v.Secret != nil {
				refs[v.Secret.SecretName] = true
			}
		}
		_ = name
	}
	if got := keys(refs); !slices.Equal(got, []string{"ops-credentials", "ops-exec-signing", "ops-nats-users", "ops-seal-keys"}) {
		t.Errorf("pods read Secrets %v, want only the operator's", got)
	}
}
