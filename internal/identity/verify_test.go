package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// issuer is a test identity provider: an RSA key (kid k1) and an EC key
// (kid k2), published as a JWKS and as a PEM file.
type issuer struct {
	rsa  *rsa.PrivateKey
	ec   *ecdsa.PrivateKey
	ed   ed25519.PrivateKey
	now  time.Time
	jwks []byte
	pem  []byte
}

func newIssuer(t testing.TB) *issuer {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, dk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &rk.PublicKey, KeyID: "k1", Use: "sig"},
		{Key: &ek.PublicKey, KeyID: "k2", Algorithm: "ES256"},
		{Key: dk.Public(), KeyID: "k3"},
		{Key: []byte("a symmetric key is skipped"), KeyID: "oct"},
	}}
	jwks, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	return &issuer{rsa: rk, ec: ek, ed: dk, now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), jwks: jwks,
		pem: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})}
}

func (is *issuer) claims() jwt.MapClaims {
	return jwt.MapClaims{"iss": "https://issuer.test", "aud": "toolgate", "sub": "alice", "tenant": "acme",
		"roles": []string{"billing"}, "exp": is.now.Add(time.Hour).Unix(), "iat": is.now.Unix()}
}

func (is *issuer) sign(t testing.TB, m jwt.SigningMethod, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	var k any = is.rsa
	switch m.Alg() {
	case "ES256":
		k = is.ec
	case "EdDSA":
		k = is.ed
	}
	s, err := tok.SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (is *issuer) config(t testing.TB, file []byte) Config {
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return Config{Issuer: "https://issuer.test", Audience: "toolgate", KeysFile: path, Now: func() time.Time { return is.now }}
}

func with(c jwt.MapClaims, k string, v any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for kk, vv := range c {
		out[kk] = vv
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func TestVerify(t *testing.T) {
	is := newIssuer(t)
	v, err := New(context.Background(), is.config(t, is.jwks))
	if err != nil {
		t.Fatal(err)
	}
	c := is.claims()
	pubDER, _ := x509.MarshalPKIXPublicKey(&is.rsa.PublicKey)
	hsWithPublic := func(keyBytes []byte) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
		tok.Header["kid"] = "k1"
		s, _ := tok.SignedString(keyBytes)
		return s
	}
	noneTok := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, c)
		tok.Header["kid"] = "k1"
		s, _ := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		return s
	}
	for _, test := range []struct {
		name, token, want string // want: "" ok, else a part of the error
	}{
		{"valid RS256", is.sign(t, jwt.SigningMethodRS256, "k1", c), ""},
		{"valid PS256", is.sign(t, jwt.SigningMethodPS256, "k1", c), ""},
		{"valid ES256", is.sign(t, jwt.SigningMethodES256, "k2", c), ""},
		{"valid EdDSA", is.sign(t, jwt.SigningMethodEdDSA, "k3", c), ""},
		{"valid without kid", is.sign(t, jwt.SigningMethodRS256, "", c), ""},
		{"expired", is.sign(t, jwt.SigningMethodRS256, "k1", with(c, "exp", is.now.Add(-time.Hour).Unix())), "expired"},
		{"expired within leeway", is.sign(t, jwt.SigningMethodRS256, "k1", with(c, "exp", is.now.Add(-10*time.Second).Unix())), ""},
		{"no exp", is.sign(t, jwt.SigningMethodRS256, "k1", with(c, "exp", nil)), "exp"},
		{"not yet valid", is.sign(t, jwt.SigningMethodRS256, "k1", with(c, "nbf", is.now.Add(time.Hour).Unix())), "not valid yet"},
		{"issued in the future", is.sign(t, jwt.SigningMethodRS256, "k1", with(c, "iat", is.now.Add(time.Hour).Unix())), "used before issued"},
		{"wrong aud", is.sign(t, jwt.SigningMethodRS256, "k1", with(c, "aud", "someone-else")), "audience"},
		{"wrong iss", is.sign(t, jwt.SigningMethodRS256, "k1", with(c, "iss", "https://evil.test")), "issuer"},
		{"alg none", noneTok(), "signing method"},
		{"HS256 keyed with the public key (PEM)", hsWithPublic(is.pem), "signing method"},
		{"HS256 keyed with the public key (DER)", hsWithPublic(pubDER), "signing method"},
		{"RS256 under the EC key's kid", is.sign(t, jwt.SigningMethodRS256, "k2", c), "no key"},
		{"unknown kid", is.sign(t, jwt.SigningMethodRS256, "k9", c), "no key"},
		{"no principal", is.sign(t, jwt.SigningMethodRS256, "k1", with(c, "sub", nil)), "no principal"},
		{"tenant not a string", is.sign(t, jwt.SigningMethodRS256, "k1", with(c, "tenant", 7)), "not a string"},
		{"garbage", "not.a.token", "malformed"},
		{"empty", "", "no token"},
		{"oversize", strings.Repeat("a", DefaultMaxToken+1), "over the"},
		{"edited payload", editPayload(is.sign(t, jwt.SigningMethodRS256, "k1", c)), "signature"},
	} {
		t.Run(test.name, func(t *testing.T) {
			id, err := v.Verify(context.Background(), test.token)
			switch {
			case test.want == "" && err != nil:
				t.Fatalf("refused a valid token: %v", err)
			case test.want == "" && (id.Principal != "alice" || id.Tenant != "acme" || !slices.Equal(id.Roles, []string{"billing"})):
				t.Fatalf("identity %+v", id)
			case test.want != "" && err == nil:
				t.Fatalf("accepted: %+v", id)
			case test.want != "" && !strings.Contains(err.Error(), test.want):
				t.Fatalf("error %q, want it to say %q", err, test.want)
			}
		})
	}
}

// editPayload swaps the payload for one with another subject, keeping the
// signature.
func editPayload(tok string) string {
	parts := strings.Split(tok, ".")
	parts[1] = base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"https://issuer.test","aud":"toolgate","sub":"mallory","exp":9999999999}`))
	return strings.Join(parts, ".")
}

func TestVerify_roles_claim_string_or_list(t *testing.T) {
	is := newIssuer(t)
	cfg := is.config(t, is.pem)
	cfg.RolesClaim, cfg.TenantClaim = "groups", "org"
	v, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := with(with(is.claims(), "org", "globex"), "groups", "admin, billing ops")
	id, err := v.Verify(context.Background(), is.sign(t, jwt.SigningMethodRS256, "any-kid", c))
	if err != nil {
		t.Fatal(err)
	}
	if id.Tenant != "globex" || !slices.Equal(id.Roles, []string{"admin", "billing", "ops"}) {
		t.Fatalf("identity %+v", id)
	}
	if _, err := v.Verify(context.Background(), is.sign(t, jwt.SigningMethodRS256, "", with(c, "groups", []any{"a", 1}))); err == nil {
		t.Fatal("a roles list holding a number was accepted")
	}
}

func TestVerify_unknown_kids_refetch_the_jwks_at_most_every_interval(t *testing.T) {
	is := newIssuer(t)
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Write(is.jwks)
	}))
	defer srv.Close()
	now := is.now
	cfg := Config{Issuer: "https://issuer.test", Audience: "toolgate", JWKSURL: srv.URL, RefreshEvery: time.Minute, Now: func() time.Time { return now }}
	v, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute) // past the interval since the fetch at start
	for i := range 50 {            // an attacker's stream of made-up kids
		if _, err := v.Verify(context.Background(), is.sign(t, jwt.SigningMethodRS256, "made-up-"+string(rune('a'+i%26)), is.claims())); err == nil {
			t.Fatal("unknown kid accepted")
		}
	}
	if n := fetches.Load(); n != 2 { // the start, and one refresh
		t.Fatalf("%d fetches of the JWKS for 50 unknown kids, want 2", n)
	}
	now = now.Add(2 * time.Minute)
	if _, err := v.Verify(context.Background(), is.sign(t, jwt.SigningMethodRS256, "k1", with(is.claims(), "exp", now.Add(time.Hour).Unix()))); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), is.sign(t, jwt.SigningMethodRS256, "new", is.claims())); err == nil {
		t.Fatal("unknown kid accepted")
	}
	if n := fetches.Load(); n != 3 {
		t.Fatalf("%d fetches after the interval, want 3", n)
	}
}

func TestNew_refuses_bad_configuration(t *testing.T) {
	is := newIssuer(t)
	for _, test := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no audience", Config{Issuer: "x", KeysFile: "k"}, "audience"},
		{"no keys", Config{Issuer: "x", Audience: "a"}, "public keys"},
		{"both", Config{Issuer: "x", Audience: "a", KeysFile: "k", JWKSURL: "https://x"}, "not both"},
		{"bad url", Config{Issuer: "x", Audience: "a", JWKSURL: "file:///etc/passwd"}, "https"},
		{"private key file", is.config(t, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}})), "private key"},
		{"symmetric only", is.config(t, []byte(`{"kty":"oct","k":"c2VjcmV0"}`)), "no usable"},
		{"empty file", is.config(t, nil), "no public key"},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := New(context.Background(), test.cfg)
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Fatalf("error %v, want it to say %q", err, test.want)
			}
		})
	}
}

func TestVerifyAt_a_cached_token_still_expires(t *testing.T) {
	is := newIssuer(t)
	v, err := New(context.Background(), is.config(t, is.jwks))
	if err != nil {
		t.Fatal(err)
	}
	tok := is.sign(t, jwt.SigningMethodES256, "k2", is.claims())
	if _, err := v.VerifyAt(context.Background(), tok, is.now); err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyAt(context.Background(), tok, is.now.Add(2*time.Hour)); err == nil {
		t.Fatal("a token verified before was accepted after its exp")
	}
	if _, err := v.VerifyAt(context.Background(), tok, is.now.Add(-time.Hour)); err == nil {
		t.Fatal("a token verified before was accepted before its iat")
	}
}
