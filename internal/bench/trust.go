package bench

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/identity"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/pkg/wire"
)

// Where a trust core's work is done: by toolgate (counted in its trust per
// call) or by the executor (printed apart).
const (
	TrustToolgate = "toolgate"
	TrustExecutor = "executor"
)

// jwtPool is how many distinct tokens the first-sight measurement cycles
// through: more than the verifier's token cache holds, so none is found
// there.
const jwtPool = 5000

// trustCores measures the trust work of the valid call approved (as the
// gates left it, no seals yet): the seals of the five sealing stages
// (accumulate, parse, validate, business, policy: an HMAC each, over the
// hashes of the raw and canonical arguments), execute's check of them, the
// ed25519 signature on the executor request, and a JWT verification when
// an issuer is set (ES256; a token seen before is found in the verifier's
// cache: that is the figure per call, the first sight beside it, not
// counted); apart, the executor's check of the signature.
func trustCores(approved call.Envelope) ([]CoreCost, error) {
	kr, err := seal.Ephemeral(seal.Sealing())
	if err != nil {
		return nil, err
	}
	approved.Seals = nil
	sealed := approved
	if err := sealAll(kr, &sealed); err != nil {
		return nil, err
	}
	var cores []CoreCost
	add := func(name, what, who string, f func() error) error {
		c, err := measure(name, what, false, f)
		if err != nil {
			return err
		}
		c.Trust = who
		cores = append(cores, c)
		return nil
	}
	if err := add("seals", "seal.Keyring.Seal at each of the 5 sealing stages", TrustToolgate, func() error {
		e := approved
		return sealAll(kr, &e)
	}); err != nil {
		return nil, err
	}
	if err := add("seal checks", "seal.Keyring.Verify at execute (5 seals)", TrustToolgate, func() error {
		_, err := kr.Verify(&sealed)
		return err
	}); err != nil {
		return nil, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, err := execute.NewSigner(priv)
	if err != nil {
		return nil, err
	}
	req := wire.ExecRequest{CallID: sealed.CallID, IdempotencyKey: "idem-" + sealed.CallID, Tool: sealed.ToolName, Body: sealed.Arguments}
	now := time.Unix(1700000000, 0)
	var header string
	if err := add("request signature", "execute.Signer.Sign as execute signs by default: the ed25519 v2 of the executor request", TrustToolgate, func() error {
		header, err = signer.Sign(req, now)
		return err
	}); err != nil {
		return nil, err
	}
	// Not counted: what --exec-signature-v1=true makes of the row above.
	if err := add("request signature, v1 beside v2", "execute.Signer.Sign with --exec-signature-v1=true, for executors that read only v1 (not counted: not the default)", "", func() error {
		_, err := signer.WithV1().Sign(req, now)
		return err
	}); err != nil {
		return nil, err
	}
	jwtCores, err := jwtCosts(now)
	if err != nil {
		return nil, err
	}
	cores = append(cores, jwtCores...)
	pub := priv.Public().(ed25519.PublicKey)
	if err := add("executor's check", "wire.VerifyExecWindow (ed25519, the v2), as pkg/toolserver does", TrustExecutor, func() error {
		return wire.VerifyExecWindow(header, req, wire.ExecWindow{Now: now}, pub)
	}); err != nil {
		return nil, err
	}
	return cores, nil
}

// sealAll seals e as accumulate and the four gates do, each at its verdict.
func sealAll(kr *seal.Keyring, e *call.Envelope) error {
	args := e.Arguments
	e.Arguments = nil // accumulate seals before parse has canonical arguments
	for _, st := range append([]string{seal.Accumulate}, seal.Gates()...) {
		e.Status = seal.Verdict(st)
		if st == seal.Parse {
			e.Arguments = args
		}
		if err := kr.Seal(st, e); err != nil {
			return err
		}
	}
	return nil
}

// jwtCosts measures identity.Verifier.VerifyAt on an ES256 token: the same
// token again (the verifier's cache) and tokens it has not seen.
func jwtCosts(now time.Time) ([]CoreCost, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "toolgate-bench-jwt-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	keys := filepath.Join(dir, "issuer.pem")
	if err := os.WriteFile(keys, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	const iss, aud = "https://issuer.bench.example", "toolgate"
	ctx := context.Background()
	v, err := identity.New(ctx, identity.Config{Issuer: iss, Audience: aud, KeysFile: keys, Now: func() time.Time { return now }})
	if err != nil {
		return nil, err
	}
	tokens := make([]string, jwtPool)
	for i := range tokens {
		tokens[i], err = jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
			"iss": iss, "aud": aud, "sub": "bob", "tenant": "acme", "roles": []string{"billing"},
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": fmt.Sprint(i),
		}).SignedString(key)
		if err != nil {
			return nil, err
		}
	}
	seen, err := measure("token", "identity.Verifier.VerifyAt, a token seen before (its cache)", false, func() error {
		_, err := v.VerifyAt(ctx, tokens[0], now)
		return err
	})
	if err != nil {
		return nil, err
	}
	seen.Trust = TrustToolgate
	i := 0
	first, err := measure("token, first sight", "identity.Verifier.VerifyAt, ES256 signature and claims (not counted: once per token)", false, func() error {
		i = (i + 1) % len(tokens)
		_, err := v.VerifyAt(ctx, tokens[i], now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return []CoreCost{seen, first}, nil
}

// TrustTotals sums the trust cores' CPU: toolgate's per valid call, and
// the executor's.
func TrustTotals(cores []CoreCost) (own, executor time.Duration) {
	for _, c := range cores {
		switch c.Trust {
		case TrustToolgate:
			own += c.CPU
		case TrustExecutor:
			executor += c.CPU
		}
	}
	return own, executor
}
