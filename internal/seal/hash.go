package seal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

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

// ApprovalOf is how a seal names the human decision d: its arguments hash
// and who decided, both quoted so no two decisions read alike; "" for none.
func ApprovalOf(d *call.Decision) string {
	if d == nil {
		return ""
	}
	return quote(d.Hash) + " by " + quote(d.By)
}
