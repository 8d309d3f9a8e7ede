package call

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"

	"github.com/toolgate/toolgate/pkg/wire"
)

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// ValidResponseID reports whether id can stand as one subject token and one
// key-value key: letters, digits, '-' and '_', at most 128 bytes. Producers
// use it in toolgate.in.stream.<response-id> and read results on
// toolgate.results.<response-id>.
func ValidResponseID(id string) bool { return tokenRE.MatchString(id) }

// SafeResponseID returns id unchanged when it is valid, and otherwise a
// stable token derived from it ("r" + 32 hex digits of its sha256), so that
// a producer's odd id never breaks a subject.
func SafeResponseID(id string) string {
	if ValidResponseID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "r" + hex.EncodeToString(sum[:16])
}

// ID is toolgate's own call id of call index of a response keyed
// responseKey (Key: the response id, qualified by its tenant): stable across
// redelivery and replay because it depends only on them.
func ID(responseID string, index int) string {
	return fmt.Sprintf("%s-%d", responseID, index)
}

// Key is responseID as toolgate keys it for tenant (wire.ResponseKey): its
// calls' ids (ID of the key, wire.CallID), its batch and its response-id
// claim are made of it, so two tenants using one response id share none.
func Key(tenant, responseID string) string { return wire.ResponseKey(tenant, responseID) }
