// Package redact decides what of a tool call may be written to logs and
// audit events: a hash of the raw arguments, and a copy in which sensitive
// fields and recognisable secrets (API keys, bearer tokens, passwords, card
// numbers, email addresses) are masked. It works on valid JSON and on
// truncated or malformed argument text alike, and never panics.
//
// Redaction is a safety net, not a guarantee: it masks what it recognises.
// Full raw arguments belong only in the dead-letter stream, with its
// retention limit.
package redact

import (
	"crypto/sha256"
	"encoding/hex"
)

// Hash returns "sha256:<hex>" of raw: the stable fingerprint of the raw
// arguments that logs and audit events carry instead of the arguments.
func Hash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}
