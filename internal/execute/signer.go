package execute

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Signer signs every request the execute gate sends to an executor
// (wire.SignExecV2: a Toolgate-Signature header over the call id,
// idempotency key, tool, query, body, issue time and expiry). It holds the ed25519 private keys; executors
// hold only the public keys, so a compromised tool cannot sign for toolgate.
// Several keys sign at once during a rotation (a v2 each); the first is the
// current one.
type Signer struct {
	keys     []ed25519.PrivateKey
	now      func() time.Time
	lifetime time.Duration
	v1       bool
}

// WithV1 returns s signing a v1 (no expiry) beside each v2
// (--exec-signature-v1=true), for executors written before the expiry that
// read only v1. Not the default: a captured request signed with a v1 never
// expires for such an executor (the replay issue 28 closed for v2), and it
// doubles the signing work — two ed25519 signatures a request instead of
// one.
func (s *Signer) WithV1() *Signer {
	c := *s
	c.v1 = true
	return &c
}

// Sign is the Toolgate-Signature value of r issued at now: what execute
// sends (exported for the bench's trust table). A v2 alone, unless WithV1.
func (s *Signer) Sign(r wire.ExecRequest, now time.Time) (string, error) {
	if s.v1 {
		return wire.SignExecUntil(r, now, now.Add(s.Lifetime()), s.keys...)
	}
	return wire.SignExecV2(r, now, now.Add(s.Lifetime()), s.keys...)
}

// WithLifetime returns s signing requests that expire d after they are
// signed (--exec-signature-ttl); d <= 0: wire.DefaultExecLifetime. An
// executor refuses a request past its expiry, and one signed to live longer
// than it accepts (pkg/toolserver's Lifetime).
func (s *Signer) WithLifetime(d time.Duration) *Signer {
	c := *s
	c.lifetime = d
	return &c
}

// Lifetime is how long a request s signs stays good.
func (s *Signer) Lifetime() time.Duration {
	if s.lifetime <= 0 {
		return wire.DefaultExecLifetime
	}
	return s.lifetime
}

// NewSigner signs with keys (at least one).
func NewSigner(keys ...ed25519.PrivateKey) (*Signer, error) {
	if len(keys) == 0 {
		return nil, errors.New("execute: signer: no key")
	}
	for _, k := range keys {
		if len(k) != ed25519.PrivateKeySize {
			return nil, errors.New("execute: signer: a key is not an ed25519 private key")
		}
	}
	return &Signer{keys: keys, now: time.Now}, nil
}

// GenerateSigner makes a signer with a fresh key (kept in memory only).
func GenerateSigner() (*Signer, error) {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("execute: signer: %w", err)
	}
	return NewSigner(k)
}

// Public returns the public keys executors verify with, the current first.
func (s *Signer) Public() []ed25519.PublicKey {
	out := make([]ed25519.PublicKey, len(s.keys))
	for i, k := range s.keys {
		out[i] = k.Public().(ed25519.PublicKey)
	}
	return out
}

// PublicText is the public keys as an executor reads them
// (TOOLGATE_EXEC_PUBLIC_KEY or exec-signing.pub): base64, one a line.
func (s *Signer) PublicText() string {
	var b []byte
	for _, k := range s.Public() {
		b = append(b, wire.FormatExecPublicKey(k)+"\n"...)
	}
	return string(b)
}

// header returns the Toolgate-Signature value of req sent with body (the
// arguments, or nothing for a query), naming replay partition partition
// (0: none). A nil Signer signs nothing ("", nil).
func (s *Signer) header(req Request, query string, body []byte, partition int) (string, error) {
	if s == nil {
		return "", nil
	}
	now := s.now()
	h, err := s.Sign(wire.ExecRequest{CallID: req.CallID, IdempotencyKey: req.IdempotencyKey, Tool: req.Tool, Query: query, Body: body, ReplayPartition: partition}, now)
	if err != nil {
		return "", fmt.Errorf("%w: %w: %v", ErrNotRun, ErrCannotRun, err)
	}
	return h, nil
}
