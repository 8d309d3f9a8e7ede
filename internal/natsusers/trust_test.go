package natsusers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// trustConfig is a deployment with two executor groups and two tenants, as
// issue 15's findings were made against.
func trustConfig() authz.Config {
	return authz.Config{
		Groups:  []authz.Group{{Name: "payments", Tools: []string{"create_invoice", "refund"}}, {Name: "accounts", Tools: []string{"delete_customer_account"}}},
		Tenants: []string{"acme", "globex"},
	}
}

// runConfig starts an embedded JetStream server with the users of c, each
// with the password "pw-<user>", and applies the topology as the admin.
func runConfig(t *testing.T, c authz.Config) *server.Server {
	t.Helper()
	pw := map[string]string{}
	for _, u := range c.Names() {
		pw[u] = "pw-" + u
	}
	users, err := ConfigUsers(c, pw)
	if err != nil {
		t.Fatal(err)
	}
	s := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	nc, js := connectAs(t, s, authz.Admin, nil)
	if err := streams.Ensure(context.Background(), js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	return s
}

// deniedSubscribe subscribes to subject and waits for the server to refuse
// it: the permission violation it reports, and no message through it.
func deniedSubscribe(t *testing.T, nc *nats.Conn, v *violations, subject string) {
	t.Helper()
	if _, err := nc.Subscribe(subject, func(m *nats.Msg) { t.Errorf("received %s through a denied subscription to %s", m.Subject, subject) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 3*time.Second, 10*time.Millisecond, func() error { return v.about(subject) })
}

// receives subscribes to subject and proves it is allowed: a message sent by
// send arrives.
func receives(t *testing.T, nc *nats.Conn, subject string, send func()) {
	t.Helper()
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	send()
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("subscription to %s: %v", subject, err)
	}
}

func TestTrust_executor_credentials_are_per_tool(t *testing.T) {
	c := trustConfig()
	s := runConfig(t, c)
	v := &violations{}
	payments := authz.ExecutorUser("payments")
	enc, _ := connectAs(t, s, payments, v)

	// It serves its own tools as a NATS micro service named after its
	// group (what pkg/toolserver builds on): the service's discovery
	// subjects are its own too.
	svc, err := micro.AddService(enc, micro.Config{Name: "payments", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()
	served := make(chan string, 10)
	for _, tool := range []string{"create_invoice", "refund"} {
		h := micro.HandlerFunc(func(r micro.Request) {
			served <- tool
			_ = r.Respond([]byte(`{"ok":"` + tool + `"}`))
		})
		if err := svc.AddEndpoint(tool, h, micro.WithEndpointSubject(streams.Exec(tool))); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	xnc, _ := connectAs(t, s, streams.Execute, nil)
	reply, err := xnc.Request(streams.Exec("create_invoice"), []byte(`{}`), 5*time.Second)
	if err != nil {
		t.Fatalf("execute calling the payments executor: %v", err)
	}
	if !strings.Contains(string(reply.Data), `"ok":"create_invoice"`) {
		t.Fatalf("reply %s", reply.Data)
	}
	anc, _ := connectAs(t, s, authz.Admin, nil)
	if _, err := anc.Request("$SRV.PING.payments", nil, 5*time.Second); err != nil {
		t.Fatalf("discovery of the payments service: %v", err)
	}
	v.mu.Lock()
	if len(v.errs) > 0 {
		t.Errorf("the payments executor needed permissions it does not have: %v", v.errs)
	}
	v.mu.Unlock()

	// Another group's tool, every tool, discovery of everything, and the
	// replies of others are refused.
	for _, subj := range []string{streams.Exec("delete_customer_account"), streams.Exec(">"), "toolgate.exec.*", "$SRV.>", "$SRV.PING.accounts", "_INBOX.>", authz.InboxPrefix(authz.Admin) + ".>", streams.ResultsAll()} {
		deniedSubscribe(t, enc, v, subj)
	}
	if _, err := xnc.Request(streams.Exec("delete_customer_account"), []byte(`{}`), time.Second); err == nil {
		t.Fatal("a request for delete_customer_account was answered with only the payments executor connected")
	}
	// It publishes nothing but answers: no forged reply to someone's inbox,
	// no envelope into the gates.
	for _, subj := range []string{"_INBOX.forged", authz.InboxPrefix(streams.Execute) + ".forged", streams.Gate(streams.Execute), streams.SubjectInResponse} {
		if err := enc.Publish(subj, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 3*time.Second, 10*time.Millisecond, func() error { return v.about(subj) })
	}
	close(served)
	for tool := range served {
		if tool != "create_invoice" {
			t.Errorf("the payments executor ran %s", tool)
		}
	}
}

func TestTrust_producer_reads_only_its_tenant(t *testing.T) {
	s := runConfig(t, trustConfig())
	v := &violations{}
	acme := authz.ProducerUser("acme")
	pnc, pjs := connectAs(t, s, acme, v)
	// Execute publishes results, accumulate a stream's progress.
	for subj, from := range map[string]string{wire.TenantResults("acme"): streams.Execute, wire.TenantProgress("acme"): streams.Accumulate} {
		snc, _ := connectAs(t, s, from, nil)
		receives(t, pnc, subj, func() {
			if err := snc.Publish(strings.Replace(subj, ">", "r-1", 1), []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Its publishes, on its own tenant's subject, are acknowledged under its
	// own inbox prefix.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := pjs.Publish(ctx, wire.InTenantResponse("acme"), []byte(`{}`), jetstream.WithMsgID("acme-1")); err != nil {
		t.Fatalf("producer-acme publishing a response: %v", err)
	}
	for _, subj := range []string{wire.TenantResults("globex"), wire.TenantProgress("globex"), wire.TenantResults(""), streams.ResultsAll(), streams.ProgressAll(), "toolgate.results.*.r-1", "_INBOX.>", authz.InboxPrefix(authz.ProducerUser("globex")) + ".>", streams.Exec(">"), "$SRV.>"} {
		deniedSubscribe(t, pnc, v, subj)
	}
}
