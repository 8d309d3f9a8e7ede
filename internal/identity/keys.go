package identity

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"

	"github.com/go-jose/go-jose/v4"
)

// key is one public key of the issuer and the algorithms a token signed
// with it may name: fixed by the key's type (and curve), so a token can
// never pick "none" or HMAC keyed with public key bytes.
type key struct {
	kid  string // "" when the source gave none (PEM): it then fits any kid
	pub  crypto.PublicKey
	algs []string
}

// minRSABits refuses RSA keys too short to trust.
const minRSABits = 2048

func newKey(kid, alg string, pub crypto.PublicKey) (key, error) {
	var algs []string
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N == nil || k.N.BitLen() < minRSABits {
			return key{}, fmt.Errorf("identity: key %q: an RSA key needs at least %d bits", kid, minRSABits)
		}
		algs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			algs = []string{"ES256"}
		case elliptic.P384():
			algs = []string{"ES384"}
		case elliptic.P521():
			algs = []string{"ES512"}
		default:
			return key{}, fmt.Errorf("identity: key %q: unsupported curve", kid)
		}
	case ed25519.PublicKey:
		algs = []string{"EdDSA"}
	default:
		return key{}, fmt.Errorf("identity: key %q: %T is not a public signing key (RSA, EC or Ed25519)", kid, pub)
	}
	if alg != "" {
		if !slices.Contains(algs, alg) {
			return key{}, fmt.Errorf("identity: key %q: alg %q does not fit its key type", kid, alg)
		}
		algs = []string{alg}
	}
	return key{kid: kid, pub: pub, algs: algs}, nil
}

// parseKeys reads a keys file's or a JWKS URL's bytes: PEM blocks, one JWK,
// or a JWKS. Keys it cannot use (symmetric, unknown types) are skipped; none
// usable is an error.
func parseKeys(data []byte) ([]key, error) {
	data = bytes.TrimSpace(data)
	var keys []key
	var skipped []string
	if len(data) > 0 && data[0] == '{' {
		var set struct {
			Keys []json.RawMessage `json:"keys"`
		}
		if err := json.Unmarshal(data, &set); err != nil {
			return nil, fmt.Errorf("identity: keys: not a JWK or JWKS: %w", err)
		}
		raws := set.Keys
		if raws == nil {
			raws = []json.RawMessage{data} // one JWK
		}
		for i, raw := range raws {
			k, err := jwkKey(raw)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("key %d: %v", i+1, err))
				continue
			}
			keys = append(keys, k)
		}
	} else {
		for rest := data; ; {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil {
				break
			}
			k, err := pemKey(b)
			if err != nil {
				skipped = append(skipped, err.Error())
				continue
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		if len(skipped) > 0 {
			return nil, fmt.Errorf("identity: keys: no usable public key (%s)", skipped[0])
		}
		return nil, errors.New("identity: keys: no public key found: want PEM PUBLIC KEY blocks, a JWK or a JWKS")
	}
	return keys, nil
}

func jwkKey(raw []byte) (key, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(raw); err != nil {
		return key{}, err
	}
	if jwk.Use != "" && jwk.Use != "sig" {
		return key{}, fmt.Errorf("key %q is for %q, not signatures", jwk.KeyID, jwk.Use)
	}
	if !jwk.IsPublic() {
		jwk = jwk.Public() // a private JWK given by mistake: only its public half is used
	}
	if !jwk.Valid() {
		return key{}, fmt.Errorf("key %q is not a valid public key", jwk.KeyID)
	}
	return newKey(jwk.KeyID, jwk.Algorithm, jwk.Key)
}

func pemKey(b *pem.Block) (key, error) {
	switch b.Type {
	case "PUBLIC KEY":
		pub, err := x509.ParsePKIXPublicKey(b.Bytes)
		if err != nil {
			return key{}, fmt.Errorf("identity: PEM PUBLIC KEY: %w", err)
		}
		return newKey("", "", pub)
	case "RSA PUBLIC KEY":
		pub, err := x509.ParsePKCS1PublicKey(b.Bytes)
		if err != nil {
			return key{}, fmt.Errorf("identity: PEM RSA PUBLIC KEY: %w", err)
		}
		return newKey("", "", pub)
	case "CERTIFICATE":
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return key{}, fmt.Errorf("identity: PEM CERTIFICATE: %w", err)
		}
		return newKey("", "", cert.PublicKey)
	}
	return key{}, fmt.Errorf("identity: PEM %s: not a public key (never give toolgate the issuer's private key)", b.Type)
}
