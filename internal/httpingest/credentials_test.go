package httpingest

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

// The tokens are made once per producer user, mode 0600, and read back
// unchanged on the next start, so a client configured before a restart
// still authenticates after it.
func TestEnsureCredentials_makes_each_token_once(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	a, err := EnsureCredentials(dir, []string{"", "acme"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := EnsureCredentials(dir, []string{"", "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 2 || a[0].Name != "producer" || a[1].Name != "producer-acme" || a[1].Tenants[0] != "acme" || a[0].Token == a[1].Token {
		t.Fatalf("credentials %+v", a)
	}
	for i := range a {
		if a[i].Token != b[i].Token || len(a[i].Token) < MinTokenBytes || strings.ContainsAny(a[i].Token, "\r\n") {
			t.Fatalf("%s: token changed or malformed on the second start", a[i].Name)
		}
		st, err := os.Stat(a[i].File)
		if err != nil || st.Mode().Perm() != 0o600 || filepath.Base(a[i].File) != TokenFile(a[i].Name) {
			t.Fatalf("%s: %v %v", a[i].File, st, err)
		}
	}
}

// New refuses what would let a request in unauthenticated or make one
// token two identities.
func TestNew_refuses_a_config_without_authentication(t *testing.T) {
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	src := []Source{{Tenants: []string{""}, JS: js}}
	for name, creds := range map[string][]Credential{
		"no credential":  nil,
		"a short token":  {{Name: "p", Token: "short", Tenants: []string{""}}},
		"no tenant":      {{Name: "p", Token: token("")}},
		"a shared token": {{Name: "a", Token: token(""), Tenants: []string{""}}, {Name: "b", Token: token(""), Tenants: []string{"x"}}},
	} {
		if s, err := New(Config{Sources: src, Credentials: creds}); err == nil {
			s.Close()
			t.Errorf("%s: New took it", name)
		}
	}
}

// A credential with a principal fixes it: a request that names none
// carries the credential's, one that names another is 403.
func TestIngest_a_credentials_principal_is_the_one_published(t *testing.T) {
	url, st := bare(t, func(c *Config) { c.Credentials[0].Principal = "bot-1" })
	body := []byte(`{"choices":[]}`)
	var a Accepted
	if code := do(t, "POST", url+RouteResponses, as("", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "pr-1"}), body, &a); code != http.StatusAccepted {
		t.Fatalf("POST: %d %+v", code, a)
	}
	var p problem
	if code := do(t, "POST", url+RouteResponses, as("", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "pr-2", "Toolgate-Principal": "alice"}), body, &p); code != http.StatusForbidden || p.Code != CodeForbidden {
		t.Fatalf("POST as another principal: %d %+v", code, p)
	}
	got := storedBy(t, st)
	if len(got["pr-1"]) != 1 || got["pr-1"][0].Get("Toolgate-Principal") != "bot-1" || len(got["pr-2"]) != 0 {
		t.Fatalf("stored %v", got)
	}
}
