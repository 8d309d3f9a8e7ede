package stage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/ingest"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// TestTrust_response_ids_are_claimed_per_tenant: issue 28's "response ids
// are first come, across tenants". Before, tenant evil publishing first
// under the response id tenant victim was going to use had its own call run
// under that id, and the victim's publish was refused
// (response_id_conflict): a squat, and an oracle telling evil which ids
// victim uses. Now ids are claimed per tenant and call ids carry the
// tenant: evil publishes victim-0 first, with the very body the victim
// sends after; both publishes are stored (neither is the other's
// JetStream duplicate), both calls run under call ids of their own, each
// tenant's results hold only its own call, the two status records are
// separate, and nothing anywhere says the id was used by another tenant.
func TestTrust_response_ids_are_claimed_per_tenant(t *testing.T) {
	r := startTrustRig(t, true)
	_, js := r.connectAs(t, authz.Producer)
	p := producer.New(js)
	const rid = "victim-0"
	body := chat(rid, "get_weather", `{"city":"Oslo"}`, "tool_calls")
	evil := producer.Meta{Provider: "openai-chat", ResponseID: rid, Token: r.issuer.token("evil", "mallory")}
	if err := p.PublishResponse(r.ctx, evil, body); err != nil {
		t.Fatal(err)
	}
	evilCall, victimCall := wire.CallID("evil", rid, 0), wire.CallID("victim", rid, 0)
	if evilCall == victimCall || evilCall == call.ID(rid, 0) {
		t.Fatalf("call ids %q and %q: want one per tenant", evilCall, victimCall)
	}
	r.waitStatus(evilCall, call.Executed)
	victim := producer.Meta{Provider: "openai-chat", ResponseID: rid, Token: r.issuer.token("victim", "vera")}
	if err := p.PublishResponse(r.ctx, victim, body); err != nil {
		t.Fatalf("the victim's publish after evil's: %v, want it stored and run", err)
	}
	vrec := r.waitStatus(victimCall, call.Executed)
	erec := r.waitStatus(evilCall, call.Executed)
	if vrec.CallID != victimCall || erec.CallID != evilCall {
		t.Fatalf("status records %q and %q", vrec.CallID, erec.CallID)
	}
	if n := r.executed.Load(); n != 2 {
		t.Fatalf("the tool ran %d times, want twice: once per tenant (a shared idempotency key answers the second from the store)", n)
	}
	r.settled(streams.Accumulate)
	r.settled(streams.Execute)
	for tenant, want := range map[string]string{"evil": evilCall, "victim": victimCall} {
		rs := resultsOn(t, r.pipe, wire.Results(tenant, rid))
		if len(rs) != 1 || rs[0]["call_id"] != want || rs[0]["status"] != string(call.Executed) {
			t.Fatalf("results of tenant %s: %v, want exactly its own call %s, executed", tenant, rs, want)
		}
	}
	for _, rs := range r.results(rid) {
		if strings.Contains(fmtJSON(rs), string(call.ResponseIDConflict)) {
			t.Fatalf("a result says the id was used: %v", rs)
		}
	}
	if dl := r.dlq(streams.DLQ(streams.Accumulate, ingest.CodeResponseIDConflict)); len(dl) != 0 {
		t.Fatalf("%d response_id_conflict dead letters, want none", len(dl))
	}
}

// resultsOn is every result on subject.
func resultsOn(t *testing.T, p *pipe, subject string) []map[string]any {
	t.Helper()
	c, err := p.js.OrderedConsumer(p.ctx, streams.StreamResults, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.FetchNoWait(100)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for m := range batch.Messages() {
		var r map[string]any
		if err := json.Unmarshal(m.Data(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTrust_dev_mode_grants_no_roles_from_headers: issue 28's "roles are
// taken from headers on the default deployment". Before, without an issuer,
// any producer sending Toolgate-Roles: admin passed a policy of
// 'admin' in roles (recorded unverified, but it counted). Now an
// unverified identity is granted no roles: the admin-only tool is
// policy_rejected, on the plain subject and on the producer's own subject
// alike while the deployment does not list it, the claimed roles are
// recorded in the call's history, and nothing waits for approval or runs.
func TestTrust_dev_mode_grants_no_roles_from_headers(t *testing.T) {
	r := startTrustRig(t, false)
	_, js := r.connectAs(t, authz.Producer)
	p := producer.New(js)
	body := func(rid string) []byte { return chat(rid, "delete_customer_account", deleteArgs, "tool_calls") }
	meta := producer.Meta{Provider: "openai-chat", ResponseID: "claims-admin", Principal: "mallory", Roles: "admin"}
	if err := p.PublishResponse(r.ctx, meta, body(meta.ResponseID)); err != nil {
		t.Fatal(err)
	}
	meta.ResponseID = "claims-admin-as"
	if err := p.AssertingAs(authz.Producer).PublishResponse(r.ctx, meta, body(meta.ResponseID)); err != nil {
		t.Fatal(err)
	}
	for _, rid := range []string{"claims-admin", "claims-admin-as"} {
		rec := r.waitStatus(call.ID(rid, 0), call.PolicyRejected)
		if rec.Identity != call.IdentityUnverified || !strings.Contains(fmtJSON(rec.History), "roles not granted (identity unverified): admin") {
			t.Fatalf("%s: identity %q, history %s: want unverified, and the claimed roles recorded", rid, rec.Identity, fmtJSON(rec.History))
		}
	}
	r.settled(streams.Policy)
	if n := r.executed.Load(); n != 0 {
		t.Fatalf("%d calls executed, want none", n)
	}
}

// TestTrust_listed_user_asserts_roles: a NATS user the deployment lists in
// --identity-assert-users (a gateway that authenticates its own callers)
// has its roles granted when it publishes on its own subject, which only
// it may publish on: the admin-only tool passes policy (it waits for
// approval, being irreversible), recorded identity asserted. The same
// headers on the plain ingest subject, where anyone publishes, are still
// granted nothing, and no other user may publish on its subject.
func TestTrust_listed_user_asserts_roles(t *testing.T) {
	r := startTrustRig(t, false, func(c *Config) { c.AssertUsers = []string{authz.Producer} })
	_, js := r.connectAs(t, authz.Producer)
	p := producer.New(js)
	body := func(rid string) []byte { return chat(rid, "delete_customer_account", deleteArgs, "tool_calls") }
	meta := producer.Meta{Provider: "openai-chat", ResponseID: "gateway-admin", Principal: "ada", Roles: "admin"}
	if err := p.AssertingAs(authz.Producer).PublishResponse(r.ctx, meta, body(meta.ResponseID)); err != nil {
		t.Fatal(err)
	}
	if rec := r.waitStatus(call.ID("gateway-admin", 0), call.ApprovalRequired); rec.Identity != call.IdentityAsserted {
		t.Fatalf("identity %q, want asserted", rec.Identity)
	}
	meta.ResponseID = "plain-admin"
	if err := p.PublishResponse(r.ctx, meta, body(meta.ResponseID)); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(call.ID("plain-admin", 0), call.PolicyRejected)
	_, ejs := r.connectAs(t, authz.Executor)
	meta.ResponseID = "forged-admin"
	if err := producer.New(ejs).AssertingAs(authz.Producer).PublishResponse(r.ctx, meta, body(meta.ResponseID)); err == nil {
		t.Fatal("another user published on the producer's own subject")
	}
}
