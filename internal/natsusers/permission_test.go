package natsusers

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// runSecured starts an embedded JetStream server with every user of Names,
// each with the password "pw-<user>", and applies the topology as the admin.
func runSecured(t *testing.T) *server.Server {
	t.Helper()
	pw := map[string]string{}
	for _, u := range authz.Names() {
		pw[u] = "pw-" + u
	}
	users, err := Users(pw)
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

// violations collects the permission errors the server reports to a
// connection.
type violations struct {
	mu   sync.Mutex
	errs []error
}

func (v *violations) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.errs = append(v.errs, err)
}

func (v *violations) about(subject string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, err := range v.errs {
		if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject+`"`) {
			return nil
		}
	}
	return errors.New("no permissions violation reported for " + subject)
}

func connectAs(t *testing.T, s *server.Server, user string, v *violations) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	opts := authz.ClientOptions(user, "pw-"+user)
	if v != nil {
		opts = append(opts, nats.ErrorHandler(v.handler))
	}
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

func TestPermissions_parse_cannot_skip_to_policy_or_execute(t *testing.T) {
	s := runSecured(t)
	v := &violations{}
	nc, js := connectAs(t, s, streams.Parse, v)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// Its own output is allowed: proof that the denials below are about the
	// subject, not a broken connection.
	if _, err := js.Publish(ctx, streams.Gate(streams.Validate), []byte(`{}`)); err != nil {
		t.Fatalf("parse publishing to validate: %v", err)
	}
	for _, subj := range []string{streams.Exec("create_invoice"), streams.Gate(streams.Policy), streams.Gate(streams.Execute)} {
		if err := nc.Publish(subj, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 3*time.Second, 10*time.Millisecond, func() error { return v.about(subj) })
	}
	// Through JetStream the publish fails too, and nothing reaches policy.
	pctx, pcancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer pcancel()
	if _, err := js.Publish(pctx, streams.Gate(streams.Policy), []byte(`{}`), jetstream.WithRetryAttempts(0)); err == nil {
		t.Fatal("parse published to the policy stage's input through JetStream")
	}
	_, ajs := connectAs(t, s, authz.Admin, nil)
	st, err := ajs.Stream(ctx, streams.StreamGates)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(streams.Gate(">")))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects[streams.Gate(streams.Policy)] + info.State.Subjects[streams.Gate(streams.Execute)]; n != 0 {
		t.Fatalf("%d messages reached policy/execute from parse", n)
	}
	if info.State.Subjects[streams.Gate(streams.Validate)] != 1 {
		t.Fatalf("subjects = %v, want the one message to validate", info.State.Subjects)
	}
}

func TestPermissions_parse_cannot_take_another_stages_work(t *testing.T) {
	s := runSecured(t)
	_, js := connectAs(t, s, streams.Parse, &violations{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := js.Consumer(ctx, streams.StreamGates, streams.Parse); err != nil {
		t.Fatalf("parse looking up its own consumer: %v", err)
	}
	if _, err := js.Consumer(ctx, streams.StreamGates, streams.Policy); err == nil {
		t.Fatal("parse could look up the policy consumer")
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, streams.StreamGates, jetstream.ConsumerConfig{Durable: "sneak", FilterSubject: streams.Gate(streams.Execute)}); err == nil {
		t.Fatal("parse created a consumer on the execute stage's input")
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SNEAK", Subjects: []string{"sneak.>"}}); err == nil {
		t.Fatal("parse created a stream")
	}
}

func TestPermissions_execute_may_call_executors(t *testing.T) {
	s := runSecured(t)
	enc, _ := connectAs(t, s, authz.Executor, nil)
	sub, err := enc.Subscribe(streams.Exec("get_weather"), func(m *nats.Msg) { _ = m.Respond([]byte(`{"ok":true}`)) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	xnc, _ := connectAs(t, s, streams.Execute, nil)
	reply, err := xnc.Request(streams.Exec("get_weather"), []byte(`{}`), 3*time.Second)
	if err != nil {
		t.Fatalf("execute calling an executor: %v", err)
	}
	if string(reply.Data) != `{"ok":true}` {
		t.Fatalf("reply = %s", reply.Data)
	}
	if err := enc.Publish(streams.Gate(streams.Execute), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
}
