// Executor request signatures. The execute gate signs every request it sends
// to an executor (a call, or a status query) with an ed25519 private key
// only it holds; an executor verifies with the public key and refuses what
// does not verify, so a request that skipped the gates is refused by the tool
// itself, whatever the broker or the network allows. The format follows
// webhook signing (Stripe, Standard Webhooks), so it can be written in any
// language from this text:
//
// Header (NATS request header or HTTP request header):
//
//	Toolgate-Signature: t=<unix seconds>,e=<unix seconds>,v1=<base64>,v2=<base64>[,v1=...,v2=...]
//
// Items are separated by ","; t (the issue time) and e (the expiry) appear
// once each; one v1 and one v2 per signing key (several while the key
// rotates; any one that verifies is enough); items with other names are
// ignored. Signatures are standard base64 with padding (RFC 4648 §4) of
// the 64-byte ed25519 signature (RFC 8032) over the signed content: for v2,
// the UTF-8 bytes of these eight lines joined by "\n" (no trailing newline):
//
//	toolgate-exec.v2
//	<t, as in the header>
//	<e, as in the header>
//	<call id: header Toolgate-Call-Id>
//	<idempotency key: header Toolgate-Idempotency-Key>
//	<tool name: the tool the executor serves>
//	<query: "" for a call, "status" for Toolgate-Query: status>
//	<lowercase hex sha256 of the exact body bytes received (arguments JSON; empty for a query)>
//
// A request that names a partition of the executors' replay bucket (header
// Toolgate-Replay-Partition: <k>, sent only for k >= 1; see
// HeaderReplayPartition) has one line more, k in decimal, between the query
// line and the body's hash, in v1 and v2 alike: removing, adding or editing
// the header breaks every signature, so a request recorded in one bucket
// cannot be sent to another. An executor that predates the header refuses
// such a request (invalid): upgrade executors before P is raised.
//
// v1 is the same without the e line and with the first line
// "toolgate-exec.v1": what execute stages before the expiry sent. An execute
// stage sends it beside v2 only when told to (--exec-signature-v1=true), for
// executors written for it: a v1 never expires for them.
//
// No field may contain "\r" or "\n" (such a request is refused). A verifier
// refuses a request without the header, a malformed header, one where no
// signature verifies with any of its public keys, and one outside its
// window: issued (t) in the future or expired (past e) beyond the clock skew
// allowed (default 5 s), or living longer (e - t) than the verifier's
// lifetime (default 60 s). With e present only v2 counts (a v1 cannot stand
// in for it, so the expiry cannot be edited); a header with t and v1 alone
// (an older execute stage) expires at t plus the verifier's lifetime, and a
// verifier that requires the expiry refuses it. A request is good once: an
// executor also keeps a durable record of each idempotency key it took
// (pkg/toolserver: the JetStream key-value bucket ExecReplayBucket) and
// never runs a second delivery of it. The public key is distributed
// as standard base64 of its 32 raw bytes (toolgate up writes it to
// <secrets dir>/exec-signing.pub); a PEM "PUBLIC KEY" (PKIX) block is
// accepted too.
//
// A refusing executor does not run the request and answers so that toolgate
// knows it did not run: over NATS a reply with header
// Toolgate-Signature-Refused: <reason> (pkg/toolserver also sends
// {"ok":false,"error":...}); over HTTP status 401 with that header. The
// execute gate then treats the call as not run: it ends the call at once
// with a dead letter (a request it signed anew cannot fare better), except
// for "stale", which it retries with a fresh signature.
package wire

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header names and defaults of executor request signatures.
const (
	HeaderSignature = "Toolgate-Signature"
	// HeaderSignatureRefused is set on an executor's answer to a request it
	// refused for its signature; its value is the reason (Refused*).
	HeaderSignatureRefused = "Toolgate-Signature-Refused"
	// ExecSignatureContext is the first line of the content a v1 signs.
	ExecSignatureContext = "toolgate-exec.v1"
	// ExecSignatureContextV2 is the first line of the content a v2 signs.
	ExecSignatureContextV2 = "toolgate-exec.v2"
	// DefaultExecTolerance is how far a v1-only signature's t may be from
	// the verifier's clock for VerifyExec.
	DefaultExecTolerance = 5 * time.Minute
	// DefaultExecLifetime is how long a signed request is good for: the
	// execute stage's expiry (e - t) and the most a verifier accepts.
	DefaultExecLifetime = 60 * time.Second
	// DefaultExecSkew is the clock difference a verifier allows around t
	// and e.
	DefaultExecSkew = 5 * time.Second
	// ExecReplayBucket is the JetStream key-value bucket in which
	// pkg/toolserver keeps a durable record of every request it took, keyed
	// by tool and idempotency key, so that a request never runs twice, even
	// across an executor's restarts; status queries answer from it.
	ExecReplayBucket = "toolgate_exec_replay"
	// ExecPublicKeyFile is the public key's file in toolgate's secrets
	// directory (TOOLGATE_SECRETS, default .toolgate/secrets).
	ExecPublicKeyFile = "exec-signing.pub"
)

// Reasons in HeaderSignatureRefused.
const (
	RefusedUnsigned  = "unsigned"
	RefusedMalformed = "malformed"
	RefusedStale     = "stale"
	RefusedInvalid   = "invalid"
)

// Bounds on a header a verifier reads (hostile input).
const (
	maxSignatureHeader = 4096
	maxSignatureItems  = 16
)

// Errors of VerifyExec; each names a Refused* reason (RefusedReason).
var (
	ErrExecUnsigned  = errors.New("wire: request has no " + HeaderSignature + " header")
	ErrExecMalformed = errors.New("wire: malformed " + HeaderSignature + " header")
	ErrExecStale     = errors.New("wire: " + HeaderSignature + " has expired or is not yet valid")
	ErrExecInvalid   = errors.New("wire: " + HeaderSignature + " does not verify")
)

// ExecRequest is what a signature covers: one request to an executor.
type ExecRequest struct {
	CallID         string
	IdempotencyKey string
	Tool           string
	Query          string // "" for a call; QueryStatus for a status query
	Body           []byte // the exact bytes sent
	// ReplayPartition is the partition of the executors' replay bucket the
	// request names (header Toolgate-Replay-Partition): 0 when absent.
	ReplayPartition int
}

// ExecSignedContent returns the bytes signed for r at unix time t.
func ExecSignedContent(t int64, r ExecRequest) ([]byte, error) {
	for _, f := range [...]struct{ name, v string }{{"call id", r.CallID}, {"idempotency key", r.IdempotencyKey}, {"tool", r.Tool}, {"query", r.Query}} {
		if strings.ContainsAny(f.v, "\r\n") {
			return nil, fmt.Errorf("wire: exec signature: the %s contains a line break", f.name)
		}
	}
	if r.ReplayPartition < 0 || r.ReplayPartition >= MaxPartitions {
		return nil, fmt.Errorf("wire: exec signature: replay partition %d is not 0 to %d", r.ReplayPartition, MaxPartitions-1)
	}
	lines := []string{ExecSignatureContext, strconv.FormatInt(t, 10), r.CallID, r.IdempotencyKey, r.Tool, r.Query}
	if r.ReplayPartition > 0 {
		lines = append(lines, strconv.Itoa(r.ReplayPartition))
	}
	sum := sha256.Sum256(r.Body)
	return []byte(strings.Join(append(lines, hex.EncodeToString(sum[:])), "\n")), nil
}

// ExecSignedContentV2 returns the bytes a v2 signs for r issued at unix
// time t and expiring at unix time e.
func ExecSignedContentV2(t, e int64, r ExecRequest) ([]byte, error) {
	v1, err := ExecSignedContent(t, r)
	if err != nil {
		return nil, err
	}
	_, rest, _ := strings.Cut(string(v1), "\n")
	ts, rest, _ := strings.Cut(rest, "\n")
	return []byte(ExecSignatureContextV2 + "\n" + ts + "\n" + strconv.FormatInt(e, 10) + "\n" + rest), nil
}

// SignExecUntil returns the Toolgate-Signature header value for r issued
// at time at and good until expires: t, e, and a v1 and a v2 per key
// (several during a rotation). The v1 is for executors that predate e.
func SignExecUntil(r ExecRequest, at, expires time.Time, keys ...ed25519.PrivateKey) (string, error) {
	return signExec(r, at.Unix(), expires.Unix(), true, true, keys)
}

// SignExecV2 is SignExecUntil without the v1s: t, e and a v2 per key (what
// the execute stage sends by default), one
// ed25519 signature a key instead of two, for executors that all verify
// the expiry (pkg/toolserver since e= exists). An executor that reads
// only v1 refuses it.
func SignExecV2(r ExecRequest, at, expires time.Time, keys ...ed25519.PrivateKey) (string, error) {
	return signExec(r, at.Unix(), expires.Unix(), false, true, keys)
}

// SignExec returns the Toolgate-Signature header value for r at time at,
// one v1 per key (several during a rotation), without an expiry: what
// execute stages before SignExecUntil sent.
func SignExec(r ExecRequest, at time.Time, keys ...ed25519.PrivateKey) (string, error) {
	return signExec(r, at.Unix(), 0, true, false, keys)
}

// signExec is the header value of the Sign* functions: t, then with v2 e,
// then for each key its v1 (with v1) and its v2 (with v2), in that order.
// e is read only with v2.
func signExec(r ExecRequest, t, e int64, v1, v2 bool, keys []ed25519.PrivateKey) (string, error) {
	if len(keys) == 0 {
		return "", errors.New("wire: exec signature: no signing key")
	}
	if v2 && e <= t {
		return "", errors.New("wire: exec signature: the expiry is not after the issue time")
	}
	var m1, m2 []byte
	var err error
	if v1 {
		if m1, err = ExecSignedContent(t, r); err != nil {
			return "", err
		}
	}
	if v2 {
		if m2, err = ExecSignedContentV2(t, e, r); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	b.WriteString("t=" + strconv.FormatInt(t, 10))
	if v2 {
		b.WriteString(",e=" + strconv.FormatInt(e, 10))
	}
	for _, k := range keys {
		if len(k) != ed25519.PrivateKeySize {
			return "", errors.New("wire: exec signature: a signing key is not an ed25519 private key")
		}
		if v1 {
			b.WriteString(",v1=" + base64.StdEncoding.EncodeToString(ed25519.Sign(k, m1)))
		}
		if v2 {
			b.WriteString(",v2=" + base64.StdEncoding.EncodeToString(ed25519.Sign(k, m2)))
		}
	}
	return b.String(), nil
}

// ExecWindow is when a verifier accepts a signed request.
type ExecWindow struct {
	Now time.Time
	// Lifetime is the longest e - t accepted, and the lifetime of a
	// signature without e; 0: DefaultExecLifetime.
	Lifetime time.Duration
	// Skew is the clock difference allowed around t and e; 0:
	// DefaultExecSkew.
	Skew time.Duration
	// RequireExpiry refuses a signature without e and v2 (an execute stage
	// that predates them).
	RequireExpiry bool
}

// VerifyExecWindow checks header (the Toolgate-Signature value) against r
// with keys in window w. It returns nil when the request is in its window
// and some signature verifies with some key (a v2 when the header has e,
// else a v1), else an error wrapping one of ErrExecUnsigned,
// ErrExecMalformed, ErrExecStale, ErrExecInvalid.
func VerifyExecWindow(header string, r ExecRequest, w ExecWindow, keys ...ed25519.PublicKey) error {
	if w.Lifetime <= 0 {
		w.Lifetime = DefaultExecLifetime
	}
	if w.Skew <= 0 {
		w.Skew = DefaultExecSkew
	}
	if header == "" {
		return ErrExecUnsigned
	}
	s, err := parseSignature(header)
	if err != nil {
		return err
	}
	if !s.hasE && w.RequireExpiry {
		return fmt.Errorf("%w: no e= (expiry) and v2: this executor requires them (the execute stage predates them?)", ErrExecMalformed)
	}
	issued := time.Unix(s.t, 0)
	expires := issued.Add(w.Lifetime)
	if s.hasE {
		if s.e <= s.t {
			return fmt.Errorf("%w: e=%d is not after t=%d", ErrExecMalformed, s.e, s.t)
		}
		if life := time.Duration(s.e-s.t) * time.Second; life > w.Lifetime {
			// A configuration no retry fixes (the execute stage's
			// --exec-signature-ttl over the executor's Lifetime): malformed,
			// so the call ends at once rather than being retried.
			return fmt.Errorf("%w: signed to live %v, longer than this executor accepts (%v): lower the execute stage's --exec-signature-ttl or raise the executor's lifetime", ErrExecMalformed, life, w.Lifetime)
		}
		expires = time.Unix(s.e, 0)
	}
	switch {
	case w.Now.Before(issued.Add(-w.Skew)):
		return fmt.Errorf("%w: issued at %s, %v ahead of this clock (skew allowed %v)", ErrExecStale, issued.UTC().Format(time.RFC3339), issued.Sub(w.Now).Round(time.Second), w.Skew)
	case w.Now.After(expires.Add(w.Skew)):
		return fmt.Errorf("%w: expired at %s, %v ago by this clock (issued %s; skew allowed %v)", ErrExecStale, expires.UTC().Format(time.RFC3339), w.Now.Sub(expires).Round(time.Second), issued.UTC().Format(time.RFC3339), w.Skew)
	}
	var msg []byte
	sigs := s.v1
	if s.hasE {
		msg, err = ExecSignedContentV2(s.t, s.e, r)
		sigs = s.v2
	} else {
		msg, err = ExecSignedContent(s.t, r)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrExecMalformed, err)
	}
	for _, sig := range sigs {
		for _, k := range keys {
			if len(k) == ed25519.PublicKeySize && ed25519.Verify(k, msg, sig) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w with the executor's public key (for this call id, idempotency key, tool, body, issue time and expiry)", ErrExecInvalid)
}

// VerifyExec is VerifyExecWindow with tolerance (<= 0:
// DefaultExecTolerance) as the lifetime and the skew allowed, and t at
// most tolerance from now: what verifiers before ExecWindow checked.
func VerifyExec(header string, r ExecRequest, now time.Time, tolerance time.Duration, keys ...ed25519.PublicKey) error {
	if tolerance <= 0 {
		tolerance = DefaultExecTolerance
	}
	if s, err := parseSignature(header); err == nil && now.Sub(time.Unix(s.t, 0)) > tolerance {
		return fmt.Errorf("%w: signed at %s, %v before this clock (tolerance %v)", ErrExecStale, time.Unix(s.t, 0).UTC().Format(time.RFC3339), now.Sub(time.Unix(s.t, 0)).Round(time.Second), tolerance)
	}
	return VerifyExecWindow(header, r, ExecWindow{Now: now, Lifetime: tolerance, Skew: tolerance}, keys...)
}

// signature is a parsed Toolgate-Signature header.
type signature struct {
	t, e   int64
	hasE   bool
	v1, v2 [][]byte
}

// parseSignature reads "t=...[,e=...],v1=...[,v2=...]".
func parseSignature(h string) (signature, error) {
	var s signature
	if len(h) > maxSignatureHeader {
		return s, fmt.Errorf("%w: %d bytes (at most %d)", ErrExecMalformed, len(h), maxSignatureHeader)
	}
	items := strings.Split(h, ",")
	if len(items) > maxSignatureItems {
		return s, fmt.Errorf("%w: %d items (at most %d)", ErrExecMalformed, len(items), maxSignatureItems)
	}
	seenT := false
	for _, it := range items {
		k, v, ok := strings.Cut(strings.TrimSpace(it), "=")
		if !ok {
			return s, fmt.Errorf("%w: item %q is not name=value", ErrExecMalformed, it)
		}
		switch k {
		case "t", "e":
			to, seen := &s.t, &seenT
			if k == "e" {
				to, seen = &s.e, &s.hasE
			}
			if *seen {
				return s, fmt.Errorf("%w: %s appears twice", ErrExecMalformed, k)
			}
			*seen = true
			n, err := strconv.ParseInt(v, 10, 64)
			if v == "" || strings.Trim(v, "0123456789") != "" || err != nil {
				return s, fmt.Errorf("%w: %s=%q is not unix seconds", ErrExecMalformed, k, v)
			}
			*to = n
		case "v1", "v2":
			sig, derr := base64.StdEncoding.Strict().DecodeString(v)
			if derr != nil || len(sig) != ed25519.SignatureSize {
				return s, fmt.Errorf("%w: %s is not the base64 of a %d-byte ed25519 signature", ErrExecMalformed, k, ed25519.SignatureSize)
			}
			if k == "v1" {
				s.v1 = append(s.v1, sig)
			} else {
				s.v2 = append(s.v2, sig)
			}
		}
	}
	switch {
	case !seenT:
		return s, fmt.Errorf("%w: no t=", ErrExecMalformed)
	case s.hasE && len(s.v2) == 0:
		return s, fmt.Errorf("%w: e= without v2=", ErrExecMalformed)
	case !s.hasE && len(s.v1) == 0:
		return s, fmt.Errorf("%w: no v1=", ErrExecMalformed)
	}
	return s, nil
}

// RefusedReason is the HeaderSignatureRefused value for a VerifyExec error.
func RefusedReason(err error) string {
	switch {
	case errors.Is(err, ErrExecUnsigned):
		return RefusedUnsigned
	case errors.Is(err, ErrExecStale):
		return RefusedStale
	case errors.Is(err, ErrExecMalformed):
		return RefusedMalformed
	}
	return RefusedInvalid
}

// FormatExecPublicKey is the distributed form of a public key: standard
// base64 of its 32 bytes.
func FormatExecPublicKey(k ed25519.PublicKey) string { return base64.StdEncoding.EncodeToString(k) }

// ParseExecPublicKeys reads one or more public keys: base64 of 32 raw bytes
// each, separated by line breaks, commas or spaces, or PEM "PUBLIC KEY"
// (PKIX) blocks.
func ParseExecPublicKeys(text string) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	rest := []byte(text)
	if strings.Contains(text, "-----BEGIN") {
		for {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil {
				break
			}
			if b.Type != "PUBLIC KEY" {
				return nil, fmt.Errorf("wire: exec public key: PEM block %q, want PUBLIC KEY", b.Type)
			}
			k, err := x509.ParsePKIXPublicKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("wire: exec public key: %w", err)
			}
			ek, ok := k.(ed25519.PublicKey)
			if !ok {
				return nil, fmt.Errorf("wire: exec public key: a %T, want ed25519", k)
			}
			keys = append(keys, ek)
		}
		if strings.TrimSpace(string(rest)) != "" {
			return nil, errors.New("wire: exec public key: text after the PEM blocks")
		}
	} else {
		for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
			b, err := base64.StdEncoding.Strict().DecodeString(f)
			if err != nil || len(b) != ed25519.PublicKeySize {
				return nil, errors.New("wire: exec public key: want the standard base64 of a 32-byte ed25519 public key")
			}
			keys = append(keys, ed25519.PublicKey(b))
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("wire: exec public key: none found (want base64 of a 32-byte ed25519 public key)")
	}
	return keys, nil
}
