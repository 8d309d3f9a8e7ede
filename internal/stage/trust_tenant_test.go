package stage

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// tenantsConfig is `toolgate up --tenants evil,victim`.
func tenantsConfig() authz.Config {
	c := authz.DefaultConfig()
	c.Tenants = []string{"evil", "victim"}
	return c
}

// rawPublish publishes body on subject with headers hdr as a connection
// would, and returns the publish's error (a subject the user may not
// publish on gets no acknowledgement).
func rawPublish(js jetstream.JetStream, subject string, body []byte, hdr ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return rawPublishCtx(ctx, js, subject, body, hdr...)
}

// rawPublishCtx is rawPublish within ctx.
func rawPublishCtx(ctx context.Context, js jetstream.JetStream, subject string, body []byte, hdr ...string) error {
	m := nats.NewMsg(subject)
	m.Data = body
	for i := 0; i+1 < len(hdr); i += 2 {
		m.Header.Set(hdr[i], hdr[i+1])
	}
	_, err := js.PublishMsg(ctx, m)
	return err
}

// TestTrust_dev_mode_tenant_comes_from_the_subject: issue 28's open gap.
// Without an issuer accumulate could not tell who published on the shared
// toolgate.in.response, so producer-evil naming tenant victim
// (Toolgate-Tenant) had its call run as victim, under victim's call id,
// and victim's own publish of that id was then refused
// (response_id_conflict). Now producer-evil may not publish on the shared
// subject at all, the tenant-less producer's claim of a tenant there is
// refused (tenant_not_granted), and so is evil's on its own subject: the
// tool never receives evil's arguments, and victim's response runs under
// victim's id as if nobody had tried.
func TestTrust_dev_mode_tenant_comes_from_the_subject(t *testing.T) {
	r := startTrustRigFor(t, tenantsConfig(), false)
	_, ejs := r.connectAs(t, authz.ProducerUser("evil"))
	_, pjs := r.connectAs(t, authz.Producer)
	_, vjs := r.connectAs(t, authz.ProducerUser("victim"))
	const rid = "victim-0"
	const evilArgs = `{"city":"EVIL"}`
	evilBody := chat(rid, "get_weather", evilArgs, "tool_calls")
	hdr := []string{streams.HeaderProvider, "openai-chat", streams.HeaderResponseID, rid, streams.HeaderTenant, "victim"}
	// Refused by NATS now; on the old grants it was stored and ran as victim.
	_ = rawPublish(ejs, streams.SubjectInResponse, evilBody, append(hdr, nats.MsgIdHdr, "evil-shared")...)
	if err := rawPublish(pjs, streams.SubjectInResponse, evilBody, append(hdr, nats.MsgIdHdr, "producer-shared")...); err != nil {
		t.Fatal(err)
	}
	// The producer's client publishes a tenant's response on its subject.
	evil := producer.New(ejs).ForTenant("evil")
	if err := evil.PublishResponse(r.ctx, producer.Meta{Provider: "openai-chat", ResponseID: "evil-names-victim", Tenant: "victim"}, evilBody); err == nil {
		t.Fatal("producer-evil published a response of tenant victim")
	}
	victim := producer.New(vjs).ForTenant("victim")
	w, err := victim.Watch(rid)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := victim.PublishResponse(r.ctx, producer.Meta{Provider: "openai-chat", ResponseID: rid, Tenant: "victim"}, chat(rid, "get_weather", `{"city":"Oslo"}`, "tool_calls")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(r.ctx, 15*time.Second)
	defer cancel()
	got, resp, err := w.Await(ctx, 1)
	if err != nil || resp != nil || len(got) != 1 || got[0].CallID != wire.CallID("victim", rid, 0) || got[0].Status != wire.Executed {
		t.Fatalf("victim's outcomes %+v, response %+v (%v): want its own call %s executed", got, resp, err, wire.CallID("victim", rid, 0))
	}
	rs := resultsOn(t, r.pipe, wire.Results("", rid))
	if len(rs) != 1 || rs[0]["status"] != string(call.Rejected) || !strings.Contains(fmtJSON(rs[0]), "tenant_not_granted") {
		t.Fatalf("the tenant-less producer's results %v, want its claim of tenant victim rejected, tenant_not_granted", rs)
	}
	r.settled(streams.Accumulate)
	r.settled(streams.Execute)
	for _, args := range r.received("get_weather") {
		if strings.Contains(args, "EVIL") {
			t.Fatalf("evil's call ran: %s", args)
		}
	}
	if n := len(r.received("get_weather")); n != 1 {
		t.Fatalf("the tool ran %d times, want once (victim's)", n)
	}
}

// TestTrust_tenant_stream_is_its_tenants_alone: streams were keyed by the
// bare response id, so another producer's events on
// toolgate.in.stream.<id> ended victim's stream stream_conflict. Now
// victim's stream is on its tenant's subject, keyed by tenant and id, and
// events anyone else sends under the same id are another stream: victim's
// call runs with victim's arguments.
func TestTrust_tenant_stream_is_its_tenants_alone(t *testing.T) {
	r := startTrustRigFor(t, tenantsConfig(), false)
	_, ejs := r.connectAs(t, authz.ProducerUser("evil"))
	_, pjs := r.connectAs(t, authz.Producer)
	_, vjs := r.connectAs(t, authz.ProducerUser("victim"))
	const rid = "inject-tenant"
	mine, theirs := chatChunks("cus_9821"), chatChunks("cus_ATTACKER")
	events := func(s []string) [][]byte {
		var out [][]byte
		for _, e := range s {
			out = append(out, []byte(e))
		}
		return out
	}
	victim := producer.New(vjs).ForTenant("victim")
	meta := producer.Meta{Provider: "openai-chat", ResponseID: rid, Tenant: "victim"}
	if err := victim.PublishStream(r.ctx, meta, events(mine[:2]), ""); err != nil {
		t.Fatal(err)
	}
	for seq := 3; seq <= 4; seq++ {
		for _, js := range []jetstream.JetStream{ejs, pjs} {
			// Refused by NATS for producer-evil; stored for the
			// tenant-less producer, on a stream of its own.
			_ = rawPublish(js, streams.InStream(rid), []byte(theirs[seq-1]), streams.HeaderProvider, "openai-chat",
				streams.HeaderResponseID, rid, streams.HeaderSeq, strconv.Itoa(seq), streams.HeaderTenant, "evil")
		}
	}
	if err := victim.PublishStream(r.ctx, meta, events(mine), ""); err != nil {
		t.Fatal(err)
	}
	rec := r.waitStatus(wire.CallID("victim", rid, 0), call.Executed)
	if rec.CallID != wire.CallID("victim", rid, 0) {
		t.Fatalf("status record %q", rec.CallID)
	}
	got := r.received("create_invoice")
	if len(got) != 1 || !strings.Contains(got[0], "cus_9821") {
		t.Fatalf("the tool received %v, want victim's call alone", got)
	}
	for _, rs := range resultsOn(t, r.pipe, wire.Results("victim", rid)) {
		if rs["status"] != string(call.Executed) {
			t.Fatalf("victim's results hold %v, want only its executed call", rs)
		}
	}
}

// TestTrust_tenant_producer_publishes_only_on_its_own_subjects: each
// tenant's producer user is refused, as a permission violation, on the
// other tenant's subjects (its batch subject too) and on the shared ones;
// on its own it publishes, its batch subject included (whole responses:
// nothing below it).
func TestTrust_tenant_producer_publishes_only_on_its_own_subjects(t *testing.T) {
	r := startTrustRigFor(t, tenantsConfig(), false)
	for _, pair := range [][2]string{{"evil", "victim"}, {"victim", "evil"}} {
		me, other := pair[0], pair[1]
		var d testenv.Violations
		user := authz.ProducerUser(me)
		nc, err := nats.Connect(r.url, append(authz.ClientOptions(user, r.pw[user]), nats.ErrorHandler(d.Handler))...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, _ := jetstream.New(nc)
		body := chat("perm", "get_weather", `{"city":"Oslo"}`, "tool_calls")
		hdr := []string{streams.HeaderProvider, "openai-chat", streams.HeaderResponseID, "perm-" + me}
		for _, subj := range []string{wire.InTenantResponse(other), wire.InTenantBatch(other), wire.InTenantStream(other, "perm"), streams.SubjectInResponse, streams.InStream("perm"), wire.InTenantBatch(me) + ".stream.perm"} {
			testenv.Refused(t, user+" publishing on "+subj, func() error { return d.Saw(subj) },
				func(ctx context.Context) error { return rawPublishCtx(ctx, js, subj, body, hdr...) })
		}
		if err := rawPublish(js, wire.InTenantResponse(me), body, hdr...); err != nil {
			t.Fatalf("%s on its own subject: %v", user, err)
		}
		r.waitStatus(wire.CallID(me, "perm-"+me, 0), call.Executed)
		// Its own batch subject (issue 37): allowed, and run.
		if err := rawPublish(js, wire.InTenantBatch(me), chat("permb", "get_weather", `{"city":"Oslo"}`, "tool_calls"), streams.HeaderProvider, "openai-chat", streams.HeaderResponseID, "permb-"+me); err != nil {
			t.Fatalf("%s on its own batch subject: %v", user, err)
		}
		r.waitStatus(wire.CallID(me, "permb-"+me, 0), call.Executed)
	}
}
