package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func BenchmarkPolicy_Decide(b *testing.B) {
	c := mustCompile(b, &Policy{Risk: RiskIrreversible, Allow: `"admin" in roles`})
	args := decode(b, `{"customer_id":"cus_9821"}`)
	for _, bc := range []struct {
		name  string
		roles []string
	}{{"allowed", []string{"support", "admin"}}, {"denied", []string{"support"}}} {
		in := Input{Tool: "delete_customer_account", Args: args, Tenant: "acme", Principal: "ann", Roles: bc.roles}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Decide(in)
			}
		})
	}
}
