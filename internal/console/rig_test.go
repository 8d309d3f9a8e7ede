package console

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// rig is a console over a real embedded JetStream with the topology
// applied, served by httptest.
type rig struct {
	t   *testing.T
	js  jetstream.JetStream
	nc  *nats.Conn
	srv *Server
	ts  *httptest.Server
	c   *http.Client
	// last is the URL the last post ended at (after redirects).
	last string
}

// rigToken is the operator token of a rig made without tokens, named
// rigName; such a rig is logged in with it.
const (
	rigToken = "rig-operator-token-0123456789"
	rigName  = "olga"
)

func newRig(t *testing.T, tokens map[string]Role, names map[string]string) *rig {
	return newRigAs(t, tokens, names, false)
}

// newRigAs is newRig; with leastPriv the server has authz's users and the
// console connects as authz.Console, while the rig seeds as the admin.
func newRigAs(t *testing.T, tokens map[string]Role, names map[string]string, leastPriv bool) *rig {
	t.Helper()
	pw := map[string]string{authz.Admin: "admin-pw-0123456789", authz.Console: "console-pw-0123456789"}
	var adjust []func(*server.Options)
	if leastPriv {
		users, err := natsusers.Users(pw)
		if err != nil {
			t.Fatal(err)
		}
		adjust = append(adjust, func(o *server.Options) { o.Users = users })
	}
	s := testenv.RunJetStream(t, adjust...)
	connect := func(user string) (*nats.Conn, jetstream.JetStream) {
		var opts []nats.Option
		if leastPriv {
			opts = authz.ClientOptions(user, pw[user])
		}
		nc, err := nats.Connect(s.ClientURL(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		return nc, js
	}
	nc, js := connect(authz.Admin)
	cnc, cjs := connect(authz.Console)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Storage = jetstream.MemoryStorage
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}
	return rigOn(t, js, nc, cjs, cnc, tokens, names)
}

// rigOn serves a console over cjs (its user's connection); js seeds.
// Without tokens the console has one operator, rigToken, and the rig's
// client is logged in with it.
func rigOn(t *testing.T, js jetstream.JetStream, nc *nats.Conn, cjs jetstream.JetStream, cnc *nats.Conn, tokens map[string]Role, names map[string]string) *rig {
	t.Helper()
	first := tokens == nil
	if first {
		tokens, names = map[string]Role{rigToken: Operator}, map[string]string{rigToken: rigName}
	}
	srv, err := New(Config{JS: cjs, NC: cnc, Tokens: tokens, Names: names, Log: zerolog.Nop(), ReplayWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	mux := http.NewServeMux()
	mux.Handle(Prefix, srv.Handler())
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	r := &rig{t: t, js: js, nc: nc, srv: srv, ts: ts, c: c}
	if first {
		r.session(rigToken)
	}
	return r
}

func (r *rig) get(path string) (int, string) {
	r.t.Helper()
	resp, err := r.c.Get(r.ts.URL + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (r *rig) post(path string, form url.Values) (int, string) {
	r.t.Helper()
	resp, err := r.c.PostForm(r.ts.URL+path, form)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	r.last = resp.Request.URL.String()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// noSession gets path without a session cookie and with a forged one: each
// must be refused, its body holding none of secret.
func (r *rig) noSession(path string, secret ...string) {
	r.t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, cookie := range []string{"", "forged-0123456789"} {
		req, _ := http.NewRequest(http.MethodGet, r.ts.URL+path, nil)
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: CookieName, Value: cookie})
		}
		resp, err := c.Do(req)
		if err != nil {
			r.t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || slices.ContainsFunc(secret, func(s string) bool { return strings.Contains(string(b), s) }) {
			r.t.Fatalf("cookie %q: %d\n%s", cookie, resp.StatusCode, b)
		}
	}
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf is the CSRF token the page at path carries.
func (r *rig) csrf(path string) string {
	r.t.Helper()
	_, body := r.get(path)
	m := csrfRe.FindStringSubmatch(body)
	if m == nil {
		r.t.Fatalf("no csrf token on %s", path)
	}
	return m[1]
}

func (r *rig) login(token string) {
	r.t.Helper()
	code, body := r.post(Prefix+"login", url.Values{"token": {token}, "csrf": {r.csrf(Prefix + "login")}})
	if code != 200 || !strings.Contains(body, `data-testid="overview"`) {
		r.t.Fatalf("login: %d %s", code, body)
	}
}

// session logs in with token without loading the overview the login
// leads to (it would cache the overview before the test seeds it).
func (r *rig) session(token string) {
	r.t.Helper()
	c := *r.c
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.PostForm(r.ts.URL+Prefix+"login", url.Values{"token": {token}, "csrf": {r.srv.auth.loginCSRF()}})
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != Prefix {
		r.t.Fatalf("login: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// waiting stores a call waiting for approval: its status record and its
// approval record.
func (r *rig) waiting(id, tool, args string) approval.Record {
	r.t.Helper()
	ctx := context.Background()
	now := time.Now()
	e := call.New(strings.TrimSuffix(id, "-0"), 0, now.Add(-time.Second))
	e.ToolName, e.RawArguments, e.Arguments, e.Provider = tool, args, json.RawMessage(args), "openai"
	e.Request = call.Request{Tenant: "acme", Principal: "alice@example.com", Roles: []string{"finance"}}
	e.History = append(e.History, call.Step{Stage: streams.Policy, Status: call.ApprovalRequired, At: now})
	e.Status = call.ApprovalRequired
	rec, err := approval.NewRecord(e, "irreversible tool", time.Hour, now)
	if err != nil {
		r.t.Fatal(err)
	}
	kv, err := r.js.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := approval.NewStore(kv).Create(ctx, rec); err != nil {
		r.t.Fatal(err)
	}
	r.putStatus(pipeline.StatusOf(e))
	return rec
}

func (r *rig) putStatus(rec pipeline.StatusRecord) {
	r.t.Helper()
	kv, err := r.js.KeyValue(context.Background(), streams.BucketCalls)
	if err != nil {
		r.t.Fatal(err)
	}
	b, _ := json.Marshal(rec)
	if _, err := kv.Put(context.Background(), rec.CallID, b); err != nil {
		r.t.Fatal(err)
	}
}

// deadLetter stores a schema_invalid dead letter of a call and its status
// record; it returns the letter's sequence.
func (r *rig) deadLetter(id, tool, args string) uint64 {
	r.t.Helper()
	now := time.Now()
	e := call.New(strings.TrimSuffix(id, "-0"), 0, now.Add(-time.Second))
	e.ToolName, e.RawArguments, e.Arguments, e.Provider = tool, args, json.RawMessage(args), "openai"
	e.History = append(e.History,
		call.Step{Stage: streams.Parse, Status: call.Parsed, At: now.Add(-500 * time.Millisecond)},
		call.Step{Stage: streams.Validate, Status: call.SchemaInvalid, At: now.Add(-400 * time.Millisecond)},
		call.Step{Stage: streams.Repair, Status: call.Failed, At: now})
	e.Status, e.Failure, e.Errors = call.Failed, call.SchemaInvalid, []string{"amount: must be >= 1, got 0 (minimum)"}
	e.Repairs = []call.Repair{{Attempt: 1, Failure: call.SchemaInvalid, RawArguments: args, Errors: e.Errors, Answer: `{"amount":0,"password":"hunter2"}`, At: now}}
	body, _ := e.Marshal()
	m := nats.NewMsg(streams.DLQ(streams.Validate, string(call.SchemaInvalid)))
	m.Data = body
	m.Header.Set(streams.HeaderCallID, e.CallID)
	m.Header.Set(streams.HeaderResponseID, e.ResponseID)
	m.Header.Set(streams.HeaderTool, tool)
	ack, err := r.js.PublishMsg(context.Background(), m)
	if err != nil {
		r.t.Fatal(err)
	}
	r.putStatus(pipeline.StatusOf(e))
	return ack.Sequence
}
