package seal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"unsafe"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/canon"
)

// RawHash is the sha256 hex of raw arguments as they arrived.
func RawHash(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// ArgsHash is the sha256 hex of the canonical form of args (the same as
// approval.ArgsHash, so the policy seal binds the hash a human approved);
// "" when there are none yet.
func ArgsHash(args json.RawMessage) string {
	if len(args) == 0 {
		return ""
	}
	b, err := canon.JSON(args)
	if err != nil {
		b = args // not JSON: hash the bytes as they are
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// BytesHash is the sha256 hex of args exactly as carried; "" when there are
// none yet. For the canonical arguments the parse gate leaves it is
// ArgsHash, without canonicalising them again: the parse seal states
// ArgsHash, every later seal and execute's check BytesHash, so a call whose
// bytes are not the canonical form parse sealed, or were changed in any byte
// after it, does not verify.
func BytesHash(args []byte) string {
	if len(args) == 0 {
		return ""
	}
	return sumHex(args, "")
}

// sumHex is the sha256 hex of b; same when it reads the same (the hash a
// seal before made of the same bytes), so a gate that hashes what the gate
// before it hashed keeps that string instead of making another.
func sumHex(b []byte, same string) string {
	sum := sha256.Sum256(b)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	if string(h[:]) == same {
		return same
	}
	return string(h[:])
}

// stringBytes is s's bytes, shared, for hashing a string without copying it;
// nothing writes to them.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// ApprovalOf is how a seal names the human decision d: its arguments hash
// and who decided, both quoted so no two decisions read alike; "" for none.
func ApprovalOf(d *call.Decision) string {
	if d == nil {
		return ""
	}
	return quote(d.Hash) + " by " + quote(d.By)
}
