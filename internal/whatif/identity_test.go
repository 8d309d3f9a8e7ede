package whatif

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"
)

const rolesTools = `tools:
  - name: purge_cache
    input_schema: {type: object, properties: {zone: {type: string}}, required: [zone]}
    policy: {risk: write, allow: "'admin' in roles"}
`

// A tenant's call is re-evaluated under its own call id (acme=<rid>-0, as
// accumulate keys it since issue 28), and roles its producer only claimed
// (identity unverified: accumulate granted none) do not count in the
// what-if either: unchanged definitions change nothing. Before, the what-if
// looked for <rid>-0 (no record: not compared) and gave the claimed admin
// role to the gates, so a call policy had rejected "would pass". A producer
// the deployment lets assert roles (its record says asserted) keeps them.
func TestWindow_a_tenants_call_is_compared_with_the_roles_it_was_granted(t *testing.T) {
	ev := evaluator(t, rolesTools)
	body := []byte(`{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"tc1","type":"function","function":{"name":"purge_cache","arguments":"{\"zone\":\"eu\"}"}}]}}]}`)
	for _, test := range []struct {
		identity string
		want     call.Status // what the real pipeline decided
	}{
		{call.IdentityUnverified, call.PolicyRejected},
		{call.IdentityAsserted, call.Executed},
	} {
		h := nats.Header{}
		h.Set(streams.HeaderProvider, "openai-chat")
		h.Set(streams.HeaderResponseID, "r1")
		h.Set(streams.HeaderTenant, "acme")
		h.Set(streams.HeaderRoles, "admin")
		envs, err := Envelopes(h, body, 1)
		if err != nil || len(envs) != 1 || envs[0].CallID != "acme=r1-0" {
			t.Fatalf("envelopes %v, %v: want the call acme=r1-0", envs, err)
		}
		e := envs[0]
		e.Request.Identity = test.identity
		if test.want == call.PolicyRejected {
			e.Request.Roles = nil // as accumulate grants them
		}
		out := ev.Evaluate(context.Background(), e)[0]
		if out.Status == call.Approved {
			if err := out.Move("execute", call.Executed, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if out.Status != test.want {
			t.Fatalf("%s: the real decision %s, want %s", test.identity, out.Status, test.want)
		}
		rec, err := json.Marshal(pipeline.StatusOf(out))
		if err != nil {
			t.Fatal(err)
		}
		rep := inMemory(t, ev, []input{{h, body}}, [][]byte{rec})
		trs := rep.Sorted()
		if len(trs) != 1 || trs[0].Seen != 1 || trs[0].Unchanged != 1 || len(trs[0].Changes) != 0 {
			t.Fatalf("%s: report %+v, want the one call seen and unchanged", test.identity, trs)
		}
	}
}
