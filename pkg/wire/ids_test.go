package wire

import (
	"regexp"
	"testing"
)

// TestCallID_is_one_per_tenant_and_a_valid_key: two tenants' calls under one
// response id never share an id, the tenant-less id is as before, every id
// is a key-value key and a subject token, and SplitCallID gives the tenant
// key back.
func TestCallID_is_one_per_tenant_and_a_valid_key(t *testing.T) {
	kvKey := regexp.MustCompile(`^[-/_=a-zA-Z0-9]+$`) // a key without '.': one subject token
	seen := map[string]string{}
	for _, tenant := range []string{"", "acme", "acme-2", "_", "a b", "acme=x", "~", "Acme"} {
		id := CallID(tenant, "inv-1", 0)
		if other, ok := seen[id]; ok {
			t.Fatalf("tenants %q and %q share call id %s", tenant, other, id)
		}
		seen[id] = tenant
		if !kvKey.MatchString(id) {
			t.Errorf("call id %q of tenant %q is not a key-value key", id, tenant)
		}
		if tk, rest := SplitCallID(id); tk != TenantKey(tenant) || rest != "inv-1-0" {
			t.Errorf("SplitCallID(%q) = %q, %q; want %q, inv-1-0", id, tk, rest, TenantKey(tenant))
		}
	}
	if got := CallID("", "inv-1", 3); got != "inv-1-3" {
		t.Fatalf("tenant-less call id %q, want inv-1-3 as before", got)
	}
	if got := CallID("acme", "inv-1", 3); got != "acme=inv-1-3" {
		t.Fatalf("call id %q, want acme=inv-1-3", got)
	}
}
