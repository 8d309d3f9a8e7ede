package stage

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/identity"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// trustRig is the least-privilege pipeline of startLeastPrivilegeRig (each
// stage its own stage.Run as its own NATS user, the admin applies topology
// and tools), with an optional identity issuer, and an executor that
// records every call's arguments per tool.
type trustRig struct {
	*pipe
	url    string
	pw     map[string]string
	issuer *testIssuer // nil: dev mode
	mu     sync.Mutex
	ran    map[string][]string // tool → arguments received
}

func startTrustRig(t *testing.T, withIssuer bool, configure ...func(*Config)) *trustRig {
	t.Helper()
	return startTrustRigFor(t, authz.DefaultConfig(), withIssuer, configure...)
}

// startTrustRigFor is startTrustRig with the users of ac, as `toolgate up
// --tenants` makes them.
func startTrustRigFor(t *testing.T, ac authz.Config, withIssuer bool, configure ...func(*Config)) *trustRig {
	t.Helper()
	pw := map[string]string{}
	for _, u := range ac.Names() {
		pw[u] = "pw-" + u
	}
	users, err := natsusers.ConfigUsers(ac, pw)
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	r := &trustRig{url: srv.ClientURL(), pw: pw, ran: map[string][]string{}}
	nc, js := r.connectAs(t, authz.Admin)
	r.pipe = &pipe{t: t, nc: nc, js: js, ctx: context.Background()}
	if err := streams.Ensure(r.ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	r.defs = applyTools(t, js, map[string][]byte{"tools.yaml": exampleTools(t)})
	enc, _ := r.connectAs(t, authz.Executor)
	serveTools(t, enc, []string{"create_invoice", "get_weather", "delete_customer_account"}, func(name string, c toolserver.Call) (any, error) {
		r.executed.Add(1)
		r.mu.Lock()
		r.ran[name] = append(r.ran[name], string(c.Arguments))
		r.mu.Unlock()
		return map[string]any{"done": name}, nil
	})
	var idc identity.Config
	if withIssuer {
		r.issuer = newTestIssuer(t)
		idc = r.issuer.config()
	}
	rds := testenv.RunRedis(t)
	seals := sealtest.Keys(t)
	for _, st := range streams.Names() {
		cfg := Config{
			Seals: seals, Identity: idc,
			NATSURL: srv.ClientURL(), NATSOpts: authz.ClientOptions(st, pw[st]),
			RedisURL: rds.URL(), Stages: []string{st}, SkipEnsure: true,
			Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel).With().Str("stage", st).Logger(),
		}
		for _, c := range configure {
			c(&cfg)
		}
		runStages(t, cfg, "stage "+st+" as its own user")
	}
	return r
}

func (r *trustRig) connectAs(t *testing.T, user string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(r.url, authz.ClientOptions(user, r.pw[user])...)
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	return nc, js
}

// received is every argument document the executor got for tool.
func (r *trustRig) received(tool string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ran[tool]...)
}

// testIssuer is an identity provider: an EC key, its public half in a PEM
// file toolgate is configured with.
type testIssuer struct {
	t    *testing.T
	key  *ecdsa.PrivateKey
	file string
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	path := filepath.Join(t.TempDir(), "issuer.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &testIssuer{t: t, key: k, file: path}
}

func (is *testIssuer) config() identity.Config {
	return identity.Config{Issuer: "https://issuer.test", Audience: "toolgate", KeysFile: is.file}
}

// token is a JWT of the issuer for sub in tenant with roles.
func (is *testIssuer) token(tenant, sub string, roles ...string) string {
	is.t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": "https://issuer.test", "aud": "toolgate", "sub": sub, "tenant": tenant, "roles": roles,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
	}).SignedString(is.key)
	if err != nil {
		is.t.Fatal(err)
	}
	return s
}

// chatChunks is an OpenAI chat stream proposing create_invoice for
// customer: four events, the last with finish_reason tool_calls.
func chatChunks(customer string) []string {
	args := `{"customer_id":"` + customer + `","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900}]}`
	// The customer id is cut after "cus_", so another producer's third
	// event continues the victim's first two into a valid call for its own
	// customer, as in the finding.
	cut := len(`{"customer_id":"cus_`)
	head, tail := args[:cut], args[cut:]
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return []string{
		`{"id":"x","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"create_invoice","arguments":""}}]},"finish_reason":null}]}`,
		`{"id":"x","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":` + q(head) + `}}]},"finish_reason":null}]}`,
		`{"id":"x","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":` + q(tail) + `}}]},"finish_reason":null}]}`,
		`{"id":"x","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
}

// publishEvent publishes one stream event as a producer connection would,
// with the headers given.
func publishEvent(t *testing.T, js jetstream.JetStream, rid string, seq int, data string, hdr ...string) {
	t.Helper()
	m := nats.NewMsg(streams.InStream(rid))
	m.Data = []byte(data)
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, rid)
	m.Header.Set(streams.HeaderSeq, strconv.Itoa(seq))
	for i := 0; i+1 < len(hdr); i += 2 {
		m.Header.Set(hdr[i], hdr[i+1])
	}
	if _, err := js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

// TestTrust_stream_injection_ends_stream_conflict: issue 15's "stream
// injection". A victim's create_invoice stream is at seq 2; another producer
// publishes seq 3 and 4 with its own customer and its own identity. Before,
// "first stored wins" assembled the attacker's events into the victim's
// response and create_invoice ran for the attacker's customer under the
// victim's tenant and principal. Now the whole response ends
// stream_conflict, dead-lettered, and the tool receives nothing — not even
// when the victim's own seq 3 and 4 come after.
func TestTrust_stream_injection_ends_stream_conflict(t *testing.T) {
	for _, mode := range []struct {
		name     string
		issuer   bool
		who      func(r *trustRig) (victim, attacker []string)
		conflict string
	}{
		{"identity verified", true, func(r *trustRig) ([]string, []string) {
			return []string{wire.HeaderToken, r.issuer.token("acme", "alice", "billing")},
				[]string{wire.HeaderToken, r.issuer.token("evil", "mallory"), streams.HeaderTenant, "acme", streams.HeaderPrincipal, "alice"}
		}, "principal mallory (verified)"},
		// Tenant-less: without an issuer a tenant comes only from its own
		// subject (TestTrust_tenant_stream_is_its_tenants_alone).
		{"dev mode", false, func(*trustRig) ([]string, []string) {
			return []string{streams.HeaderPrincipal, "alice"},
				[]string{streams.HeaderPrincipal, "mallory"}
		}, "principal mallory (unverified)"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			r := startTrustRig(t, mode.issuer)
			_, victimJS := r.connectAs(t, authz.Producer)
			_, attackerJS := r.connectAs(t, authz.Producer)
			victim, attacker := mode.who(r)
			rid := "inject"
			mine, theirs := chatChunks("cus_9821"), chatChunks("cus_ATTACKER")
			publishEvent(t, victimJS, rid, 1, mine[0], victim...)
			publishEvent(t, victimJS, rid, 2, mine[1], victim...)
			publishEvent(t, attackerJS, rid, 3, theirs[2], attacker...)
			publishEvent(t, attackerJS, rid, 4, theirs[3], attacker...)
			rs := r.waitResults(rid, 1)
			if rs[0]["status"] != string(call.StreamConflict) || !strings.Contains(fmt.Sprint(rs[0]["errors"]), mode.conflict) {
				t.Fatalf("result %v, want stream_conflict naming %q", rs[0], mode.conflict)
			}
			publishEvent(t, victimJS, rid, 3, mine[2], victim...)
			publishEvent(t, victimJS, rid, 4, mine[3], victim...)
			r.settled(streams.Accumulate)
			r.settled(streams.Execute)
			if got := r.received("create_invoice"); len(got) != 0 {
				t.Fatalf("the tool received %v, want nothing", got)
			}
			if dl := deadLettersOn(t, r.pipe, streams.DLQ(streams.Accumulate, "stream_conflict")); dl != 1 {
				t.Fatalf("%d stream_conflict dead letters, want 1", dl)
			}
			if rs := r.results(rid); len(rs) != 1 {
				t.Fatalf("results %v, want only the stream_conflict", rs)
			}
		})
	}
}

// deadLettersOn counts the dead letters stored on subject.
func deadLettersOn(t *testing.T, p *pipe, subject string) int {
	t.Helper()
	var n int
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		st, err := p.js.Stream(p.ctx, streams.StreamDLQ)
		if err != nil {
			return err
		}
		info, err := st.Info(p.ctx, jetstream.WithSubjectFilter(subject))
		if err != nil {
			return err
		}
		n = 0
		for _, c := range info.State.Subjects {
			n += int(c)
		}
		if n == 0 {
			return errors.New("no dead letter yet on " + subject)
		}
		return nil
	})
	return n
}

// TestTrust_identity_comes_only_from_the_token: issue 15's "identity on
// trust". Before, Toolgate-Roles: admin from any publisher sent admin-only
// calls to approval. With an issuer configured: a message with the admin
// header and no token, or a token the issuer did not sign, is refused
// (identity_invalid) and nothing of it runs or waits for approval; with a
// valid token of a non-admin the admin-only tool is policy_rejected whatever
// the headers say, and the call records the token's principal, verified.
func TestTrust_identity_comes_only_from_the_token(t *testing.T) {
	r := startTrustRig(t, true)
	_, js := r.connectAs(t, authz.Producer)
	pub := func(rid, token string) {
		m := nats.NewMsg(streams.SubjectInResponse)
		m.Data = chat(rid, "delete_customer_account", deleteArgs, "tool_calls")
		for k, v := range map[string]string{streams.HeaderProvider: "openai-chat", streams.HeaderResponseID: rid,
			streams.HeaderTenant: "acme", streams.HeaderPrincipal: "root", streams.HeaderRoles: "admin"} {
			m.Header.Set(k, v)
		}
		if token != "" {
			m.Header.Set(wire.HeaderToken, token)
		}
		if _, err := js.PublishMsg(r.ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	forger := newTestIssuer(t) // signs, but is not the deployment's issuer
	pub("no-token", "")
	pub("forged-token", forger.token("acme", "root", "admin"))
	pub("non-admin", r.issuer.token("acme", "alice", "billing"))
	pub("admin", r.issuer.token("acme", "ada", "admin"))
	for _, rid := range []string{"no-token", "forged-token"} {
		rs := r.waitResults(rid, 1)
		if rs[0]["status"] != string(call.Rejected) || !strings.Contains(fmt.Sprint(rs[0]["errors"]), "identity_invalid") {
			t.Fatalf("%s: result %v, want rejected identity_invalid", rid, rs[0])
		}
	}
	rs := r.waitResults("non-admin", 1)
	if rs[0]["status"] != string(call.PolicyRejected) {
		t.Fatalf("non-admin token with an admin header: %v, want policy_rejected", rs[0])
	}
	if rec := r.waitStatus(wire.CallID("acme", "non-admin", 0), call.PolicyRejected); rec.Identity != call.IdentityVerified {
		t.Fatalf("status record identity %q, want verified", rec.Identity)
	}
	if ev := auditOf(t, r.pipe, wire.CallID("acme", "non-admin", 0)); ev.Principal != "alice" || ev.Tenant != "acme" || ev.Identity != call.IdentityVerified {
		t.Fatalf("audit event tenant %q principal %q identity %q, want the token's (acme, alice), verified", ev.Tenant, ev.Principal, ev.Identity)
	}
	r.waitStatus(wire.CallID("acme", "admin", 0), call.ApprovalRequired)
	pending, _, err := approval.NewStore(mustKV(t, r.pipe, streams.BucketApprovals)).Get(r.ctx, wire.CallID("acme", "admin", 0))
	if err != nil {
		t.Fatal(err)
	}
	if e, err := call.Unmarshal(pending.Envelope); err != nil || e.Request.Principal != "ada" || e.Request.Identity != call.IdentityVerified {
		t.Fatalf("admin token: waiting call %+v (%v), want principal ada, verified", e.Request, err)
	}
	r.settled(streams.Accumulate)
	r.settled(streams.Policy)
	kv, err := r.js.KeyValue(r.ctx, streams.BucketApprovals)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"no-token-0", "forged-token-0", wire.CallID("acme", "non-admin", 0)} {
		if _, err := kv.Get(r.ctx, id); !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Fatalf("%s waits for approval (%v), want no approval record", id, err)
		}
	}
	if n := r.executed.Load(); n != 0 {
		t.Fatalf("%d calls executed, want none", n)
	}
}

// TestTrust_dev_mode_identity_is_recorded_unverified: without an issuer the
// identity headers are taken as they come, and the status record and the
// audit event say so (before, nothing told a verified identity from a
// claimed one).
func TestTrust_dev_mode_identity_is_recorded_unverified(t *testing.T) {
	r := startTrustRig(t, false)
	r.publish("dev", "openai-chat", chat("dev", "get_weather", `{"city":"Oslo"}`, "tool_calls"), streams.HeaderPrincipal, "alice")
	if rs := r.waitResults("dev", 1); rs[0]["status"] != string(call.Executed) {
		t.Fatalf("result %v, want executed", rs[0])
	}
	if rec := r.waitStatus("dev-0", call.Executed); rec.Identity != call.IdentityUnverified {
		t.Fatalf("status record identity %q, want unverified", rec.Identity)
	}
	if ev := auditOf(t, r.pipe, "dev-0"); ev.Identity != call.IdentityUnverified || ev.Principal != "alice" {
		t.Fatalf("audit event identity %q principal %q, want unverified, alice", ev.Identity, ev.Principal)
	}
	// The call itself says so, not only what is derived from it; and the
	// roles it claims are recorded, not granted (issue 28).
	r.publish("dev-admin", "openai-chat", chat("dev-admin", "delete_customer_account", deleteArgs, "tool_calls"), streams.HeaderPrincipal, "alice", streams.HeaderRoles, "admin")
	if rec := r.waitStatus("dev-admin-0", call.PolicyRejected); rec.Identity != call.IdentityUnverified {
		t.Fatalf("status record identity %q, want unverified", rec.Identity)
	}
}

// auditOf is the audit event of callID, as its result carries it (issue
// 30).
func auditOf(t *testing.T, p *pipe, callID string) pipeline.AuditEvent {
	t.Helper()
	var found pipeline.AuditEvent
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		for _, ev := range p.resultAudits() {
			if ev.CallID == callID {
				found = ev
				return nil
			}
		}
		return errors.New("no result carrying the audit event of " + callID)
	})
	return found
}

// TestTrust_response_id_reuse_with_other_content_is_refused: issue 15's
// "approvals can be swapped", the response-id half. A call waits for
// approval; its response id is published again with other arguments (past
// the duplicate window: the producer's message id now carries the content's
// hash, so JetStream does not drop it). Before, the second response became a
// second round of the same call id and replaced the pending approval. Now it
// ends response_id_conflict on the sender's results, the pending record is
// unchanged, and the tool never receives the second's arguments.
func TestTrust_response_id_reuse_with_other_content_is_refused(t *testing.T) {
	// The producer may assert roles (issue 28), so the admin-only tool
	// waits for approval.
	r := startTrustRig(t, false, func(c *Config) { c.AssertUsers = []string{authz.Producer} })
	_, js := r.connectAs(t, authz.Producer)
	p := producer.New(js).AssertingAs(authz.Producer)
	meta := producer.Meta{Provider: "openai-chat", ResponseID: "swap-id", Principal: "alice", Roles: "admin"}
	if err := p.PublishResponse(r.ctx, meta, chat("swap-id", "delete_customer_account", deleteArgs, "tool_calls")); err != nil {
		t.Fatal(err)
	}
	r.waitStatus("swap-id-0", call.ApprovalRequired)
	store := approval.NewStore(mustKV(t, r.pipe, streams.BucketApprovals))
	before, rev, err := store.Get(r.ctx, "swap-id-0")
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Watch("swap-id")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const other = `{"customer_id":"cus_6666","reason":"customer asked to close the account"}`
	if err := p.PublishResponse(r.ctx, meta, chat("swap-id", "delete_customer_account", other, "tool_calls")); err != nil {
		t.Fatalf("publish of other content: %v, want it stored for toolgate to judge", err)
	}
	ctx, cancel := context.WithTimeout(r.ctx, 15*time.Second)
	defer cancel()
	_, resp, err := w.Await(ctx, 1)
	if err != nil || resp == nil || resp.Status != wire.ResponseIDConflict {
		t.Fatalf("await: %+v %v, want a response_id_conflict", resp, err)
	}
	if err := producer.Refused(resp); !errors.Is(err, producer.ErrConflict) {
		t.Fatalf("Refused: %v, want ErrConflict", err)
	}
	r.settled(streams.Accumulate)
	r.settled(streams.Policy)
	after, arev, err := store.Get(r.ctx, "swap-id-0")
	if err != nil {
		t.Fatal(err)
	}
	if arev != rev || string(after.Envelope) != string(before.Envelope) {
		t.Fatalf("the pending approval changed (revision %d → %d)", rev, arev)
	}
	if got := r.received("delete_customer_account"); len(got) != 0 {
		t.Fatalf("the tool received %v, want nothing", got)
	}
	if dl := deadLettersOn(t, r.pipe, streams.DLQ(streams.Accumulate, "response_id_conflict")); dl != 1 {
		t.Fatalf("%d response_id_conflict dead letters, want 1", dl)
	}
}

func mustKV(t *testing.T, p *pipe, bucket string) jetstream.KeyValue {
	t.Helper()
	kv, err := p.js.KeyValue(p.ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// TestTrust_victims_publish_reports_duplicate: an attacker publishes first
// under the victim's response id. Before, the victim's publish was dropped
// as a JetStream duplicate and `toolgate publish` said "published". Now the
// victim's response is stored and refused (response_id_conflict), which
// its watch reports as producer.ErrConflict, and nothing of it runs; a
// retry of exactly what was stored is ErrDuplicate, not success.
func TestTrust_victims_publish_reports_duplicate(t *testing.T) {
	r := startTrustRig(t, false)
	_, ajs := r.connectAs(t, authz.Producer)
	_, vjs := r.connectAs(t, authz.Producer)
	attacker, victim := producer.New(ajs), producer.New(vjs)
	meta := producer.Meta{Provider: "openai-chat", ResponseID: "victim-id"}
	const theirs = `{"customer_id":"cus_ATTACKER","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":1,"price_cents":4900}]}`
	body := chat("victim-id", "create_invoice", theirs, "tool_calls")
	if err := attacker.PublishResponse(r.ctx, meta, body); err != nil {
		t.Fatal(err)
	}
	if rs := r.waitResults("victim-id", 1); rs[0]["status"] != string(call.Executed) {
		t.Fatalf("attacker's call: %v", rs[0])
	}
	w, err := victim.Watch("victim-id")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := victim.PublishResponse(r.ctx, meta, chat("victim-id", "create_invoice", validInvoice, "tool_calls")); err != nil {
		t.Fatalf("victim's publish: %v", err)
	}
	ctx, cancel := context.WithTimeout(r.ctx, 15*time.Second)
	defer cancel()
	_, resp, err := w.Await(ctx, 1)
	if err != nil || producer.Refused(resp) == nil {
		t.Fatalf("victim's await: %+v %v, want the response id refused", resp, err)
	}
	if err := victim.PublishResponse(r.ctx, meta, body); !errors.Is(err, producer.ErrDuplicate) {
		t.Fatalf("publishing what was stored again: %v, want ErrDuplicate", err)
	}
	r.settled(streams.Accumulate)
	r.settled(streams.Execute)
	for _, args := range r.received("create_invoice") {
		if strings.Contains(args, "cus_9821") {
			t.Fatalf("the victim's refused call ran: %s", args)
		}
	}
}
