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
//	Toolgate-Signature: t=<unix seconds>,v1=<base64 signature>[,v1=<base64 signature>...]
//
// Items are separated by ","; t appears once; several v1 values appear while
// the signing key rotates (one per key; any one that verifies is enough);
// items with other names are ignored. Signatures are standard base64 with
// padding (RFC 4648 §4) of the 64-byte ed25519 signature (RFC 8032) over the
// signed content, the UTF-8 bytes of these seven lines joined by "\n" (no
// trailing newline):
//
//	toolgate-exec.v1
//	<t, as in the header>
//	<call id: header Toolgate-Call-Id>
//	<idempotency key: header Toolgate-Idempotency-Key>
//	<tool name: the tool the executor serves>
//	<query: "" for a call, "status" for Toolgate-Query: status>
//	<lowercase hex sha256 of the exact body bytes received (arguments JSON; empty for a query)>
//
// No field may contain "\r" or "\n" (such a request is refused). A verifier
// refuses a request without the header, a malformed header, a t more than
// the tolerance (default 5 minutes) before or after its clock, and one where
// no v1 verifies with any of its public keys. The public key is distributed
// as standard base64 of its 32 raw bytes (toolgate up writes it to
// <secrets dir>/exec-signing.pub); a PEM "PUBLIC KEY" (PKIX) block is
// accepted too.
//
// A refusing executor does not run the request and answers so that toolgate
// knows it did not run: over NATS a reply with header
// Toolgate-Signature-Refused: <reason> (pkg/toolserver also sends
// {"ok":false,"error":...}); over HTTP status 401 with that header. The
// execute gate then treats the call as not run (retried, then dead-lettered,
// never recorded as executed or failed).
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
	// ExecSignatureContext is the first line of the signed content.
	ExecSignatureContext = "toolgate-exec.v1"
	// DefaultExecTolerance is how far a signature's t may be from the
	// verifier's clock.
	DefaultExecTolerance = 5 * time.Minute
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
	ErrExecStale     = errors.New("wire: " + HeaderSignature + " timestamp is outside the tolerance")
	ErrExecInvalid   = errors.New("wire: " + HeaderSignature + " does not verify")
)

// ExecRequest is what a signature covers: one request to an executor.
type ExecRequest struct {
	CallID         string
	IdempotencyKey string
	Tool           string
	Query          string // "" for a call; QueryStatus for a status query
	Body           []byte // the exact bytes sent
}

// ExecSignedContent returns the bytes signed for r at unix time t.
func ExecSignedContent(t int64, r ExecRequest) ([]byte, error) {
	for _, f := range [...]struct{ name, v string }{{"call id", r.CallID}, {"idempotency key", r.IdempotencyKey}, {"tool", r.Tool}, {"query", r.Query}} {
		if strings.ContainsAny(f.v, "\r\n") {
			return nil, fmt.Errorf("wire: exec signature: the %s contains a line break", f.name)
		}
	}
	sum := sha256.Sum256(r.Body)
	return []byte(strings.Join([]string{ExecSignatureContext, strconv.FormatInt(t, 10), r.CallID, r.IdempotencyKey, r.Tool, r.Query, hex.EncodeToString(sum[:])}, "\n")), nil
}

// SignExec returns the Toolgate-Signature header value for r at time at,
// one v1 per key (several during a rotation).
func SignExec(r ExecRequest, at time.Time, keys ...ed25519.PrivateKey) (string, error) {
	if len(keys) == 0 {
		return "", errors.New("wire: exec signature: no signing key")
	}
	t := at.Unix()
	msg, err := ExecSignedContent(t, r)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("t=" + strconv.FormatInt(t, 10))
	for _, k := range keys {
		if len(k) != ed25519.PrivateKeySize {
			return "", errors.New("wire: exec signature: a signing key is not an ed25519 private key")
		}
		b.WriteString(",v1=" + base64.StdEncoding.EncodeToString(ed25519.Sign(k, msg)))
	}
	return b.String(), nil
}

// VerifyExec checks header (the Toolgate-Signature value) against r with
// keys at time now; tolerance <= 0 means DefaultExecTolerance. It returns nil
// when some v1 verifies with some key, else an error wrapping one of
// ErrExecUnsigned, ErrExecMalformed, ErrExecStale, ErrExecInvalid.
func VerifyExec(header string, r ExecRequest, now time.Time, tolerance time.Duration, keys ...ed25519.PublicKey) error {
	if tolerance <= 0 {
		tolerance = DefaultExecTolerance
	}
	if header == "" {
		return ErrExecUnsigned
	}
	t, sigs, err := parseSignature(header)
	if err != nil {
		return err
	}
	if d := now.Sub(time.Unix(t, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed at %s, %v from this clock (tolerance %v)", ErrExecStale, time.Unix(t, 0).UTC().Format(time.RFC3339), d.Round(time.Second), tolerance)
	}
	msg, err := ExecSignedContent(t, r)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrExecMalformed, err)
	}
	for _, s := range sigs {
		for _, k := range keys {
			if len(k) == ed25519.PublicKeySize && ed25519.Verify(k, msg, s) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w with the executor's public key (for this call id, idempotency key, tool and body)", ErrExecInvalid)
}

// parseSignature reads "t=...,v1=...[,v1=...]".
func parseSignature(h string) (t int64, sigs [][]byte, err error) {
	if len(h) > maxSignatureHeader {
		return 0, nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrExecMalformed, len(h), maxSignatureHeader)
	}
	items := strings.Split(h, ",")
	if len(items) > maxSignatureItems {
		return 0, nil, fmt.Errorf("%w: %d items (at most %d)", ErrExecMalformed, len(items), maxSignatureItems)
	}
	seenT := false
	for _, it := range items {
		k, v, ok := strings.Cut(strings.TrimSpace(it), "=")
		if !ok {
			return 0, nil, fmt.Errorf("%w: item %q is not name=value", ErrExecMalformed, it)
		}
		switch k {
		case "t":
			if seenT {
				return 0, nil, fmt.Errorf("%w: t appears twice", ErrExecMalformed)
			}
			seenT = true
			if v == "" || strings.Trim(v, "0123456789") != "" {
				return 0, nil, fmt.Errorf("%w: t=%q is not unix seconds", ErrExecMalformed, v)
			}
			if t, err = strconv.ParseInt(v, 10, 64); err != nil {
				return 0, nil, fmt.Errorf("%w: t=%q is not unix seconds", ErrExecMalformed, v)
			}
		case "v1":
			s, derr := base64.StdEncoding.Strict().DecodeString(v)
			if derr != nil || len(s) != ed25519.SignatureSize {
				return 0, nil, fmt.Errorf("%w: v1 is not the base64 of a %d-byte ed25519 signature", ErrExecMalformed, ed25519.SignatureSize)
			}
			sigs = append(sigs, s)
		}
	}
	if !seenT {
		return 0, nil, fmt.Errorf("%w: no t=", ErrExecMalformed)
	}
	if len(sigs) == 0 {
		return 0, nil, fmt.Errorf("%w: no v1=", ErrExecMalformed)
	}
	return t, sigs, nil
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
