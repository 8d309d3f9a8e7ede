package pipetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/toolgate/toolgate/internal/identity"
)

// Issuer is an identity provider: an EC key whose public half toolgate is
// configured with.
type Issuer struct {
	t   *testing.T
	key *ecdsa.PrivateKey
	// Config is toolgate's identity configuration for this issuer.
	Config identity.Config
}

// NewIssuer makes an issuer with a fresh key.
func NewIssuer(t *testing.T) *Issuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	path := filepath.Join(t.TempDir(), "issuer.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &Issuer{t: t, key: k, Config: identity.Config{Issuer: "https://issuer.test", Audience: "toolgate", KeysFile: path}}
}

// Token is a JWT of the issuer for sub in tenant with roles, valid an hour.
func (is *Issuer) Token(tenant, sub string, roles ...string) string {
	is.t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": is.Config.Issuer, "aud": is.Config.Audience, "sub": sub, "tenant": tenant, "roles": roles,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
	}).SignedString(is.key)
	if err != nil {
		is.t.Fatal(err)
	}
	return s
}
