package httpingest

import (
	"net/http"
	"testing"

	"github.com/toolgate/toolgate/internal/httpingest/pipetest"
)

// TestIngest_identity_is_checked_at_the_door_and_tenants_read_only_their_own:
// with an issuer, a request without a valid token is 401 and nothing is
// published; a tenant's outcomes are read under its token's tenant only,
// whatever Toolgate-Tenant says.
func TestIngest_identity_is_checked_at_the_door_and_tenants_read_only_their_own(t *testing.T) {
	is := pipetest.NewIssuer(t)
	in := startIngest(t, is, []string{"acme", "globex"}, nil)
	body := example(t, "valid-invoice.json")
	var p problem
	for _, tok := range []string{"", "not-a-jwt", pipetest.NewIssuer(t).Token("acme", "mallory")} {
		if code := do(t, "POST", in.url+RouteResponses, map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Token": tok}, body, &p); code != http.StatusUnauthorized || p.Code != CodeUnauthorized {
			t.Fatalf("POST with token %q: %d %+v", tok, code, p)
		}
	}
	if code := do(t, "GET", in.url+"/v1/responses/x/outcomes", nil, nil, &p); code != http.StatusUnauthorized {
		t.Fatalf("GET without token: %d", code)
	}
	acme := is.Token("acme", "alice")
	var a Accepted
	if code := do(t, "POST", in.url+RouteResponses, map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "acme-1", "Toolgate-Token": acme, "Toolgate-Tenant": "globex"}, body, &a); code != http.StatusAccepted {
		t.Fatalf("POST as acme: %d", code)
	}
	var o Outcomes
	do(t, "GET", in.url+a.Outcomes+"?wait=50s&calls=1", map[string]string{"Toolgate-Token": acme}, nil, &o)
	if rs := results(t, o); len(rs) != 1 || rs[0].Status != "executed" {
		t.Fatalf("acme reads its outcome: %+v", o)
	}
	// Another tenant, even naming acme in Toolgate-Tenant, reads nothing:
	// the response is unknown to it.
	if code := do(t, "GET", in.url+a.Outcomes+"?wait=100ms", map[string]string{"Toolgate-Token": is.Token("globex", "eve"), "Toolgate-Tenant": "acme"}, nil, &p); code != http.StatusNotFound {
		t.Fatalf("globex read acme's outcomes: %d %+v", code, p)
	}
	// The issuer's JWT is a bearer token too.
	o = Outcomes{}
	if code := do(t, "GET", in.url+a.Outcomes, map[string]string{"Authorization": "Bearer " + acme}, nil, &o); code != http.StatusOK || len(o.Outcomes) != 1 {
		t.Fatalf("acme with its JWT as the bearer token: %d %+v", code, o)
	}
	// A tenant this ingest has no connection for is told so.
	if code := do(t, "POST", in.url+RouteResponses, map[string]string{"Toolgate-Token": is.Token("initech", "bob")}, body, &p); code != http.StatusForbidden || p.Code != CodeTenant {
		t.Fatalf("POST as initech: %d %+v", code, p)
	}
}
