package stage

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestIdentityFlags_read_the_environment_and_refuse_half_a_configuration(t *testing.T) {
	env := map[string]string{
		"TOOLGATE_IDENTITY_ISSUER": "https://issuer.test", "TOOLGATE_IDENTITY_AUDIENCE": "toolgate",
		"TOOLGATE_IDENTITY_KEYS": "/keys.pem", "TOOLGATE_IDENTITY_ROLES_CLAIM": "groups", "TOOLGATE_RESPONSE_ID_TTL": "240h",
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	build := Flags(fs, func(k string) string { return env[k] }, ServiceDefaults())
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	f, err := build()
	if err != nil {
		t.Fatal(err)
	}
	id := f.Identity
	if id.Issuer != "https://issuer.test" || id.Audience != "toolgate" || id.KeysFile != "/keys.pem" || id.RolesClaim != "groups" || id.TenantClaim != "tenant" {
		t.Fatalf("identity config %+v", id)
	}
	if f.Settings.ResponseIDTTL != 240*time.Hour {
		t.Fatalf("response id TTL %v, want 240h", f.Settings.ResponseIDTTL)
	}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	build = Flags(fs, func(string) string { return "" }, ServiceDefaults())
	if err := fs.Parse([]string{"--identity-issuer", "https://issuer.test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := build(); err == nil || !strings.Contains(err.Error(), "audience") {
		t.Fatalf("an issuer without audience or keys: %v, want refused", err)
	}
}
