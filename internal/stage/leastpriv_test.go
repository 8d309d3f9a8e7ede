package stage

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// startLeastPrivilegePipeline runs the seven stages as `toolgate up
// --least-privilege` does: the admin applies the topology and the tools, and
// each stage runs in its own stage.Run as its own NATS user, unable to create
// anything. The executor is served as the executor user.
func startLeastPrivilegePipeline(t *testing.T) (*pipe, *testenv.Violations) {
	t.Helper()
	r := startLeastPrivilegeRig(t)
	return r.pipe, r.denied
}

// lpRig is the least-privilege pipeline with what a test needs to act as
// one of its users: the server's URL, each user's password, and the seal
// keys the stages were given.
type lpRig struct {
	*pipe
	denied *testenv.Violations
	url    string
	pw     map[string]string
	seals  *seal.Keyring
	// execMetrics are the execute stage's metrics.
	execMetrics *metrics.Metrics
}

// connectAs connects to the rig's server as user, with opts.
func (r *lpRig) connectAs(user string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	r.t.Helper()
	nc, err := nats.Connect(r.url, append(authz.ClientOptions(user, r.pw[user]), opts...)...)
	if err != nil {
		r.t.Fatalf("connect as %s: %v", user, err)
	}
	r.t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	return nc, js
}

func startLeastPrivilegeRig(t *testing.T) *lpRig {
	t.Helper()
	return startLeastPrivilegeRigWith(t, streams.DefaultSettings())
}

// startLeastPrivilegeRigWith is the rig with settings s (its lanes).
func startLeastPrivilegeRigWith(t *testing.T, s streams.Settings) *lpRig {
	t.Helper()
	pw := map[string]string{}
	for _, u := range authz.Names() {
		pw[u] = "pw-" + u
	}
	users, err := natsusers.Users(pw)
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	connect := func(user string, extra ...nats.Option) (*nats.Conn, jetstream.JetStream) {
		nc, err := nats.Connect(srv.ClientURL(), append(authz.ClientOptions(user, pw[user]), extra...)...)
		if err != nil {
			t.Fatalf("connect as %s: %v", user, err)
		}
		t.Cleanup(nc.Close)
		js, _ := jetstream.New(nc)
		return nc, js
	}
	nc, js := connect(authz.Admin)
	p := &pipe{t: t, nc: nc, js: js, ctx: context.Background()}
	if err := streams.Ensure(p.ctx, js, s); err != nil {
		t.Fatal(err)
	}
	p.defs = applyTools(t, js, map[string][]byte{"tools.yaml": exampleTools(t)})
	enc, _ := connect(authz.Executor)
	serveTools(t, enc, []string{"create_invoice", "get_weather"}, func(name string, c toolserver.Call) (any, error) {
		p.executed.Add(1)
		return map[string]any{"done": name}, nil
	})
	denied := &testenv.Violations{}
	rds := testenv.RunRedis(t)
	seals := sealtest.Keys(t) // every stage is given the same keys and keeps only its own
	execMetrics := metrics.New()
	for _, st := range streams.Names() {
		var m *metrics.Metrics
		if st == streams.Execute {
			m = execMetrics
		}
		runStages(t, Config{
			Seals: seals, Metrics: m,
			NATSURL: srv.ClientURL(), NATSOpts: append(authz.ClientOptions(st, pw[st]), nats.ErrorHandler(denied.Handler)),
			RedisURL: rds.URL(), Stages: []string{st}, SkipEnsure: true, Settings: s,
			Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel).With().Str("stage", st).Logger(),
		}, "stage "+st+" as its own user")
	}
	return &lpRig{pipe: p, denied: denied, url: srv.ClientURL(), pw: pw, seals: seals, execMetrics: execMetrics}
}

func TestLeastPrivilege_every_path_runs_with_only_the_stage_permissions(t *testing.T) {
	p, denied := startLeastPrivilegePipeline(t)
	p.publish("lp-valid", "openai-chat", chat("lp-valid", "create_invoice", validInvoice, "tool_calls"))
	p.publish("lp-cut", "openai-chat", chat("lp-cut", "create_invoice", `{"customer_id":"cus_1","curr`, "length"))
	p.publish("lp-schema", "openai-chat", chat("lp-schema", "create_invoice", `{"customer_id":"cus_1","currency":"YEN","line_items":[]}`, "tool_calls"))
	p.publish("lp-denied", "openai-chat", chat("lp-denied", "delete_customer_account", `{"customer_id":"cus_1","reason":"asked"}`, "tool_calls"))
	// Two calls in one response: batch marks.
	p.publish("lp-pair", "openai-chat", []byte(`{"id":"lp-pair","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[`+
		`{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},`+
		`{"id":"c2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}]}`))
	for rid, want := range map[string][]string{
		"lp-valid":  {"executed"},
		"lp-cut":    {"failed"},
		"lp-schema": {"failed"},
		"lp-denied": {"policy_rejected"},
		"lp-pair":   {"executed", "executed"},
	} {
		rs := waitOrDenied(t, p, denied, rid, len(want))
		for i, r := range rs {
			if r["status"] != want[i] {
				t.Errorf("%s result %d: status %v (%v), want %s", rid, i, r["status"], r["errors"], want[i])
			}
		}
	}
	if n := p.executed.Load(); n != 3 {
		t.Errorf("executed %d calls, want 3", n)
	}
	if errs := denied.All(); len(errs) > 0 {
		t.Fatalf("the stages needed permissions they do not have: %v", errs)
	}
}

// waitOrDenied waits for n results of rid, and fails at once on the first
// permission violation: a missing grant would otherwise only show as a call
// that never ends.
func waitOrDenied(t *testing.T, p *pipe, denied *testenv.Violations, rid string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if errs := denied.All(); len(errs) > 0 {
			t.Fatalf("the stages needed permissions they do not have: %v", errs)
		}
		if rs := p.results(rid); len(rs) >= n {
			return rs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: fewer than %d results after 15s", rid, n)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// With fairness lanes every stage, as its own user, takes its calls from
// its own lanes' stream (TOOLGATE_GATE_<STAGE>) and hands them on to the
// next stage's: each path ends as without lanes, no permission is missing,
// and the hops went through the lanes' streams.
func TestLeastPrivilege_lanes_run_with_only_the_stage_permissions(t *testing.T) {
	set := streams.DefaultSettings()
	set.Fair = streams.Fair{Tenants: []string{"noisy", "quiet"}}
	r := startLeastPrivilegeRigWith(t, set)
	p := r.pipe
	for _, tenant := range []string{"noisy", "quiet"} {
		p.publish("lpl-valid-"+tenant, "openai-chat", chat("lpl-valid-"+tenant, "create_invoice", validInvoice, "tool_calls"), streams.HeaderTenant, tenant)
	}
	p.publish("lpl-schema", "openai-chat", chat("lpl-schema", "create_invoice", `{"customer_id":"cus_1","currency":"YEN","line_items":[]}`, "tool_calls"), streams.HeaderTenant, "quiet")
	p.publish("lpl-denied", "openai-chat", chat("lpl-denied", "delete_customer_account", `{"customer_id":"cus_1","reason":"asked"}`, "tool_calls"), streams.HeaderTenant, "noisy")
	for rid, want := range map[string]string{
		"lpl-valid-noisy": "executed", "lpl-valid-quiet": "executed", "lpl-schema": "failed", "lpl-denied": "policy_rejected",
	} {
		if rs := waitOrDenied(t, p, r.denied, rid, 1); rs[0]["status"] != want {
			t.Errorf("%s: status %v (%v), want %s", rid, rs[0]["status"], rs[0]["errors"], want)
		}
	}
	if n := p.executed.Load(); n != 2 {
		t.Errorf("executed %d calls, want 2", n)
	}
	for _, ls := range streams.LaneStreams() {
		st, err := p.js.Stream(p.ctx, ls)
		if err != nil {
			t.Fatal(err)
		}
		if info, err := st.Info(p.ctx); err != nil || (ls != streams.LaneStream(streams.Repair) && info.State.LastSeq == 0) {
			t.Errorf("%s stored no hop (%v): the lanes did not carry the calls", ls, err)
		}
	}
	if errs := r.denied.All(); len(errs) > 0 {
		t.Fatalf("the stages needed permissions they do not have: %v", errs)
	}
}
