package wire

import (
	"strconv"
	"strings"
)

// A response id is the producer's, and two tenants may use the same one:
// inside toolgate a response is known by its response key, the response id
// qualified by its tenant, and its calls by call ids made of that key. So
// two tenants' responses under one id never share a call id, a status
// record, an approval, an idempotency key, a batch or a stored result, and
// neither can tell from any answer that the other used the id.

// TenantKey is tenant as a part of a key-value key and a call id: "" for
// no tenant, otherwise TenantToken with '=' in place of '~' (which keys do
// not allow), so it never contains another tenant's key and never a '='
// after its first byte.
func TenantKey(tenant string) string {
	if tenant == "" {
		return ""
	}
	return strings.Replace(TenantToken(tenant), "~", "=", 1)
}

// ResponseKey is responseID as toolgate keys it for tenant: the id itself
// for no tenant (as before tenants had keys of their own), otherwise
// "<TenantKey>=<response-id>". A response id has no '=', so the key names
// one tenant and one id.
func ResponseKey(tenant, responseID string) string {
	if tenant == "" {
		return responseID
	}
	return TenantKey(tenant) + "=" + responseID
}

// CallID is the id of call index of response responseID of tenant:
// "<response-id>-<index>" for no tenant, "<tenant>=<response-id>-<index>"
// for a tenant (a tenant that is not a plain token appears as "=" and 32 hex
// digits of its sha256). Stable across redelivery and replay.
func CallID(tenant, responseID string, index int) string {
	return ResponseKey(tenant, responseID) + "-" + strconv.Itoa(index)
}

// SplitCallID splits a call id into its tenant key ("" for none, and for a
// call id made before tenants had keys of their own) and the rest,
// "<response-id>-<index>".
func SplitCallID(callID string) (tenantKey, rest string) {
	i := strings.LastIndexByte(callID, '=')
	if i < 0 {
		return "", callID
	}
	return callID[:i], callID[i+1:]
}
