package execute

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/pkg/wire"
)

// The signing key pair's files in a secrets directory.
const (
	// SigningKeyFile holds the private key(s): PEM "PRIVATE KEY" blocks
	// (PKCS#8, as `openssl genpkey -algorithm ed25519` writes them). Several
	// blocks sign together during a rotation, the first being the current.
	SigningKeyFile = "exec-signing.key"
	// PublicKeyFile holds the public key(s) executors verify with: standard
	// base64 of the 32 raw bytes, one a line (wire.ParseExecPublicKeys).
	PublicKeyFile = wire.ExecPublicKeyFile
)

// MarshalSigningKey is k as SigningKeyFile holds it.
func MarshalSigningKey(k ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("execute: signing key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParseSigningKeys reads SigningKeyFile's format.
func ParseSigningKeys(data []byte) (*Signer, error) {
	var keys []ed25519.PrivateKey
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("execute: signing key: PEM block %q, want PRIVATE KEY (PKCS#8 ed25519)", b.Type)
		}
		k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("execute: signing key: %w", err)
		}
		ek, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("execute: signing key: a %T, want ed25519 (openssl genpkey -algorithm ed25519)", k)
		}
		keys = append(keys, ek)
	}
	if len(keys) == 0 {
		return nil, errors.New("execute: signing key: no PEM PRIVATE KEY block (make one with `openssl genpkey -algorithm ed25519`)")
	}
	return NewSigner(keys...)
}

// LoadSigner reads the signing key file at path (--exec-signing-key).
func LoadSigner(path string) (*Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("execute: --exec-signing-key: %w", err)
	}
	s, err := ParseSigningKeys(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return s, nil
}

// EnsureSigner returns the signer of dir/SigningKeyFile, generating the pair
// (SigningKeyFile and PublicKeyFile beside it) the first time: what `toolgate
// up` does in its secrets directory, so its executors find the public key
// there. A PublicKeyFile that lacks the current key is an error, never
// silently rewritten.
func EnsureSigner(dir string) (*Signer, error) {
	data, err := secrets.Ensure(dir, SigningKeyFile, func() ([]byte, error) {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		return MarshalSigningKey(k)
	})
	if err != nil {
		return nil, err
	}
	s, err := ParseSigningKeys(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, filepath.Join(dir, SigningKeyFile))
	}
	pubText, err := secrets.Ensure(dir, PublicKeyFile, func() ([]byte, error) { return []byte(s.PublicText()), nil })
	if err != nil {
		return nil, err
	}
	pubs, err := wire.ParseExecPublicKeys(string(pubText))
	if err != nil {
		return nil, fmt.Errorf("execute: %s: %w", filepath.Join(dir, PublicKeyFile), err)
	}
	for _, p := range pubs {
		if p.Equal(s.Public()[0]) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("execute: %s does not hold the public key of %s: executors would refuse every call; delete %s to have it written again",
		filepath.Join(dir, PublicKeyFile), filepath.Join(dir, SigningKeyFile), PublicKeyFile)
}
