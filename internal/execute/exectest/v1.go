// Package exectest checks executor requests in tests as an executor
// outside toolgate would.
package exectest

import (
	"crypto/ed25519"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/pkg/wire"
)

// V1Accepts reports whether header h carries a v1 that verifies as an
// executor written before the expiry checks it: t and a v1 over
// wire.ExecSignedContent, e and v2 ignored.
func V1Accepts(t testing.TB, h string, r wire.ExecRequest, pub ed25519.PublicKey) bool {
	t.Helper()
	var at int64
	var sigs [][]byte
	for _, it := range strings.Split(h, ",") {
		k, v, _ := strings.Cut(it, "=")
		switch k {
		case "t":
			at, _ = strconv.ParseInt(v, 10, 64)
		case "v1":
			sig, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				t.Fatal(err)
			}
			sigs = append(sigs, sig)
		}
	}
	content, err := wire.ExecSignedContent(at, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range sigs {
		if ed25519.Verify(pub, content, sig) {
			return true
		}
	}
	return false
}
