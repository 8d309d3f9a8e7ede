package deploy

import (
	"bufio"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/keygen"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

// generated copies deploy/ into a temporary directory and makes its
// secrets there as an operator does (toolgate secrets init
// deploy/base/secrets), returning the copy's root.
func generated(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(".")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "base", "secrets")
	if err := os.RemoveAll(dir); err != nil { // an operator's own, if any
		t.Fatal(err)
	}
	if err := keygen.Init(dir, authz.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	return root
}

// secret is the Secret kustomize generated as name-<hash>.
func (r *rendered) secret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	var found *corev1.Secret
	for n, s := range r.secrets {
		if strings.HasPrefix(n, name+"-") {
			if found != nil {
				t.Fatalf("two Secrets %s-<hash>", name)
			}
			found = s
			found.Name = n
		}
	}
	if found == nil {
		t.Fatalf("no generated Secret %s-<hash> (have %v)", name, keys(r.secrets))
	}
	return found
}

func TestKustomize_refuses_to_build_without_generated_secrets(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(".")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "base", "secrets")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"base", "overlays/hpa"} {
		_, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
		if err == nil || !strings.Contains(err.Error(), "secrets/") {
			t.Errorf("kustomize %s without secrets: %v, want it to fail on the missing secrets files", dir, err)
		}
	}
}

func TestCompose_refuses_to_start_without_generated_secrets(t *testing.T) {
	_, err := loadComposeWith()
	if err == nil || !strings.Contains(err.Error(), "toolgate secrets init") {
		t.Fatalf("docker-compose.yml without secrets: %v, want an error saying to run toolgate secrets init", err)
	}
}

// TestDeploy_ships_no_password_or_key: nothing committed for deploying
// carries a credential (a placeholder is one: it is applied as it is). Each
// line is scanned for the shapes secrets take (secretShape): PEM blocks,
// the formats of the files toolgate secrets init writes, a literal assigned
// to a password, and high-entropy values.
func TestDeploy_ships_no_password_or_key(t *testing.T) {
	var files []string
	for _, root := range []string{".", "../internal/gen/templates"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "secrets" {
				return filepath.SkipDir // git-ignored: the operator's own
			}
			if !d.IsDir() && !strings.HasSuffix(path, "_test.go") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	files = append(files, "../docker-compose.yml", "../Dockerfile")
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			if shape := secretShape(sc.Text()); shape != "" {
				t.Errorf("%s:%d carries a credential (%s): %.200s", path, n, shape, sc.Text())
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		f.Close()
	}
}

// The scanner knows the shape of every secret toolgate secrets init makes:
// each line of each file (the public key aside) is caught, so a new format
// the scanner misses fails here.
func TestDeploy_secret_scanner_catches_every_generated_secret(t *testing.T) {
	dir := t.TempDir()
	if err := keygen.Init(dir, authz.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	for _, name := range keygen.Files(authz.DefaultConfig()) {
		if name == execute.PublicKeyFile {
			continue // public
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, keygen.ComposeDirVar+"=") || strings.HasPrefix(line, "TOOLGATE_UID=") || strings.HasPrefix(line, "TOOLGATE_GID=") {
				continue // not secret: where the files are, whom they belong to
			}
			if secretShape(line) == "" {
				t.Errorf("%s: the scanner misses %q", name, line)
			}
		}
	}
	// High entropy alone, whatever the format: a random base64 value.
	if got := secretShape("value: Adl+otQiC8057L8m1lR/ll0COJQqAPgd1MB5rRHBjrM="); got != "a high-entropy value" {
		t.Errorf("a base64 key: %q", got)
	}
	for _, ok := range []string{
		"image: gcr.io/distroless/static-debian12:nonroot",
		"      password: $TOOLGATE_NATS_PASSWORD_ADMIN",
		"      TOOLGATE_NATS_PASSWORD_CONSOLE: ${TOOLGATE_NATS_PASSWORD_CONSOLE:?make them}",
		"  - ${TOOLGATE_COMPOSE_SECRETS:?x}/nats-admin.password:/etc/toolgate/secrets/nats-admin.password:ro",
		"            - name: TOOLGATE_NATS_PASSWORD",
		"        secret:",
		"JS.API.CONSUMER.DELETE.KV_toolgate_idempotency.>",
	} {
		if got := secretShape(ok); got != "" {
			t.Errorf("%q flagged as %s", ok, got)
		}
	}
}

var secretShapes = []struct {
	name string
	re   *regexp.Regexp
}{
	{"a PEM block", regexp.MustCompile(`-----BEGIN [A-Z0-9 ]+-----`)},
	{"a NATS password (tg and 32 hex digits)", regexp.MustCompile(`\btg[0-9a-f]{32}\b`)},
	{"a seal key line (key id, 64 hex digits)", regexp.MustCompile(`[A-Za-z0-9._-]{1,32} [0-9a-fA-F]{64}\b`)},
	{"a long hex value", regexp.MustCompile(`[0-9a-fA-F]{32,}`)},
	{"a literal assigned to a password", regexp.MustCompile(`(?i)(?:^|[^.\w-])(?:password|passwd|token|secret|api[_-]?key|private[_-]?key)["']?\s*[:=][ \t]*["']?[^\s"'$#{}\[\]…,]`)},
	{"a placeholder", regexp.MustCompile(`(?i)change[-_ ]?me|private key-----`)},
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/=]{20,}`)

// secretShape names the shape of secret line carries, "" for none.
func secretShape(line string) string {
	for _, s := range secretShapes {
		if s.re.MatchString(line) {
			return s.name
		}
	}
	for _, run := range base64Run.FindAllString(line, -1) {
		if strings.ContainsAny(run, "0123456789") && strings.ContainsFunc(run, unicode.IsLetter) && entropy(run) >= 4.0 {
			return "a high-entropy value"
		}
	}
	return ""
}

// entropy is s's Shannon entropy in bits per character.
func entropy(s string) float64 {
	n := map[rune]int{}
	for _, r := range s {
		n[r]++
	}
	h := 0.0
	for _, c := range n {
		p := float64(c) / float64(len(s))
		h -= p * math.Log2(p)
	}
	return h
}

func TestKustomize_stages_mount_only_their_own_keys(t *testing.T) {
	r := render(t, "base")
	sealKeys, signing := r.secret(t, "toolgate-seal-keys"), r.secret(t, "toolgate-exec-signing")
	for _, st := range seal.Needed(streams.Names()) {
		if _, err := seal.ParseKeys(sealKeys.Data[seal.FileName(st)]); err != nil {
			t.Errorf("%s in %s: %v", seal.FileName(st), sealKeys.Name, err)
		}
	}
	if _, err := execute.ParseSigningKeys(signing.Data[execute.SigningKeyFile]); err != nil {
		t.Errorf("%s: %v", execute.SigningKeyFile, err)
	}
	for _, st := range streams.Names() {
		pod := r.deployments["toolgate-"+st].Spec.Template.Spec
		c := pod.Containers[0]
		if envValue(c, "TOOLGATE_SEAL_KEYS") != "/etc/toolgate/seal" {
			t.Errorf("%s: TOOLGATE_SEAL_KEYS = %q", st, envValue(c, "TOOLGATE_SEAL_KEYS"))
		}
		var mounted []string
		signs := false
		for _, v := range pod.Volumes {
			if v.Secret == nil {
				continue
			}
			switch v.Secret.SecretName {
			case sealKeys.Name:
				for _, it := range v.Secret.Items {
					mounted = append(mounted, it.Key)
				}
			case signing.Name:
				signs = true
				if len(v.Secret.Items) != 1 || v.Secret.Items[0].Key != execute.SigningKeyFile {
					t.Errorf("%s mounts %+v of the signing Secret", st, v.Secret.Items)
				}
			default:
				t.Errorf("%s mounts Secret %s", st, v.Secret.SecretName)
			}
		}
		var want []string
		for _, s := range seal.Needed([]string{st}) {
			want = append(want, seal.FileName(s))
		}
		if !slices.Equal(mounted, want) {
			t.Errorf("%s mounts seal keys %v, want only %v", st, mounted, want)
		}
		if signs != (st == streams.Execute) || (st == streams.Execute) != (envValue(c, "TOOLGATE_EXEC_SIGNING_KEY") == "/etc/toolgate/exec/"+execute.SigningKeyFile) {
			t.Errorf("%s: signing key mounted %v, TOOLGATE_EXEC_SIGNING_KEY %q; want them on execute only", st, signs, envValue(c, "TOOLGATE_EXEC_SIGNING_KEY"))
		}
	}
}

// TestKustomize_nats_refuses_unauthenticated_clients: the rendered NATS
// configuration has users and no no_auth_user, every executor is scoped to
// its tools and no user but the admin reads every executor's requests.
func TestKustomize_nats_refuses_unauthenticated_clients(t *testing.T) {
	r := render(t, "base")
	users := r.secret(t, "toolgate-nats-users")
	root := t.TempDir()
	var accounts string
	for name, cm := range r.configMaps {
		if strings.HasPrefix(name, "nats-accounts-") {
			accounts = cm.Data["nats-accounts.conf"]
		}
	}
	for rel, data := range map[string]string{"nats-config/nats.conf": r.configMaps["nats-config"].Data["nats.conf"], "nats-accounts/nats-accounts.conf": accounts} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("POD_NAME", "nats-0")
	for k, v := range users.Data {
		t.Setenv(k, string(v))
	}
	opts, err := server.ProcessConfigFile(filepath.Join(root, "nats-config/nats.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if opts.NoAuthUser != "" || len(opts.Users) == 0 || opts.Authorization != "" {
		t.Fatalf("no_auth_user %q, %d users, token %v: every client must authenticate as its own user", opts.NoAuthUser, len(opts.Users), opts.Authorization != "")
	}
	for _, u := range opts.Users {
		if u.Password == "" || strings.HasPrefix(u.Password, "$") {
			t.Errorf("user %s has password %q", u.Username, u.Password)
		}
		if u.Username == authz.Admin {
			continue
		}
		if u.Permissions == nil || u.Permissions.Subscribe == nil {
			t.Fatalf("user %s is unrestricted", u.Username)
		}
		for _, s := range u.Permissions.Subscribe.Allow {
			if s == ">" || s == "toolgate.exec.>" || s == "$SRV.>" || s == "_INBOX.>" || s == "toolgate.results.>" {
				t.Errorf("user %s subscribes to %s", u.Username, s)
			}
		}
	}
	// Every other Secret is generated from the operator's files; the one
	// written out (connection URLs) carries no password.
	for name, sec := range r.secrets {
		if strings.HasPrefix(name, "toolgate-nats-users-") || strings.HasPrefix(name, "toolgate-seal-keys-") || strings.HasPrefix(name, "toolgate-exec-signing-") {
			continue
		}
		for k, v := range sec.StringData {
			if strings.Contains(v, "@") || strings.Contains(strings.ToUpper(k), "PASSWORD") {
				t.Errorf("Secret %s ships %s = %q", name, k, v)
			}
		}
	}
	for _, c := range r.statefulSets["nats"].Spec.Template.Spec.Containers {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil && e.SecretRef.Name != users.Name {
				t.Errorf("NATS reads Secret %s, want %s", e.SecretRef.Name, users.Name)
			}
		}
	}
}

// TestCompose_nats_requires_authentication_and_listens_on_loopback_only:
// compose's NATS loads the generated users and no no_auth_user, publishes
// its ports on 127.0.0.1 only, and every stage connects as its own user
// with its own password and seal key.
func TestCompose_nats_requires_authentication_and_listens_on_loopback_only(t *testing.T) {
	envFile := composeSecrets(t)
	p, err := loadComposeWith(envFile)
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.GetService("nats")
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range n.Ports {
		if port.HostIP != "127.0.0.1" {
			t.Errorf("NATS port %d is published on %q, want 127.0.0.1", port.Target, port.HostIP)
		}
	}
	// The server as compose runs it: its configuration, the accounts file
	// mounted beside it, the passwords in its environment.
	root := t.TempDir()
	for _, v := range n.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		data, err := os.ReadFile(v.Source)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, filepath.Base(v.Target)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range n.Environment {
		if v != nil {
			t.Setenv(k, *v)
		}
	}
	opts, err := server.ProcessConfigFile(filepath.Join(root, "toolgate.conf"))
	if err != nil {
		t.Fatalf("compose's NATS configuration: %v", err)
	}
	if opts.NoAuthUser != "" || len(opts.Users) != len(authz.Names()) {
		t.Fatalf("no_auth_user %q, %d users; want every client to authenticate", opts.NoAuthUser, len(opts.Users))
	}
	pw := map[string]string{}
	for _, u := range opts.Users {
		pw[u.Username] = u.Password
		if len(u.Password) < 32 {
			t.Errorf("user %s: password %q", u.Username, u.Password)
		}
	}
	for _, st := range streams.Names() {
		s, _ := p.GetService(st)
		if v := s.Environment["TOOLGATE_NATS_USER"]; v == nil || *v != st {
			t.Errorf("%s connects as %v", st, v)
		}
		if v := s.Environment["TOOLGATE_NATS_PASSWORD"]; v == nil || *v != pw[st] {
			t.Errorf("%s has not its own password", st)
		}
		if s.User == "" {
			t.Errorf("%s runs as the image's user, who cannot read the 0600 key files", st)
		}
		var keys []string
		for _, v := range s.Volumes {
			if strings.HasPrefix(v.Target, "/etc/toolgate/seal/") {
				keys = append(keys, filepath.Base(v.Target))
			}
		}
		var want []string
		for _, x := range seal.Needed([]string{st}) {
			want = append(want, seal.FileName(x))
		}
		if !slices.Equal(keys, want) {
			t.Errorf("%s mounts seal keys %v, want %v", st, keys, want)
		}
	}
}
