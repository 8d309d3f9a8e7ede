package toolserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// secured runs a server with c's users (password "pw-<user>") and the
// topology applied by the admin, and connects as user.
func secured(t *testing.T, c authz.Config) (s *server.Server, as func(user string) *nats.Conn) {
	t.Helper()
	pw := map[string]string{}
	for _, u := range c.Names() {
		pw[u] = "pw-" + u
	}
	users, err := natsusers.ConfigUsers(c, pw)
	if err != nil {
		t.Fatal(err)
	}
	s = testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	as = func(user string) *nats.Conn {
		t.Helper()
		nc, err := nats.Connect(s.ClientURL(), nats.UserInfo(user, "pw-"+user), nats.CustomInboxPrefix(authz.InboxPrefix(user)),
			nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	js, err := jetstreamOf(as(authz.Admin))
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.Ensure(context.Background(), js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	return s, as
}

// TestServer_Handle_fails_when_the_subscription_is_refused: an executor
// group's own NATS user serves its tools — the records bucket included, as
// its grant allows — and Handle of a tool outside the group returns the
// server's permissions violation instead of looking served; New of a
// service not named after the group fails the same way.
func TestServer_Handle_fails_when_the_subscription_is_refused(t *testing.T) {
	c := authz.Config{Groups: []authz.Group{{Name: "payments", Tools: []string{"create_invoice"}}, {Name: "weather", Tools: []string{"get_weather"}}}}
	_, as := secured(t, c)
	user := authz.ExecutorUser("payments")
	signer := testSigner(t)
	srv, err := New(as(user), "payments", "1.0.0", PublicKey(signer.Public()...))
	if err != nil {
		t.Fatalf("the group's own service: %v", err)
	}
	defer srv.Stop()
	var runs atomic.Int32
	if err := srv.Handle("create_invoice", func(context.Context, Call) (any, error) { runs.Add(1); return "inv_1", nil }); err != nil {
		t.Fatalf("the group's own tool: %v", err)
	}
	err = srv.Handle("get_weather", func(context.Context, Call) (any, error) { return nil, nil })
	if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), "toolgate.exec.get_weather") {
		t.Fatalf("Handle of another group's tool: %v, want the permissions violation", err)
	}
	// The tool it may serve runs once, its record kept under its grant.
	ex := &execute.NATS{NC: as(authz.Admin), Signer: signer}
	req := execute.Request{Tool: "create_invoice", CallID: "r-0", IdempotencyKey: strings.Repeat("0a", 32), Arguments: json.RawMessage(`{}`)}
	for range 2 {
		if rep, err := ex.Execute(context.Background(), req); err != nil || !rep.OK {
			t.Fatalf("execute: %+v %v", rep, err)
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("ran %d times, want 1", runs.Load())
	}
	if _, err := New(as(user), "billing", "1.0.0", PublicKey(signer.Public()...)); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("New of a service not named after the group: %v, want the permissions violation", err)
	}
}

// An executor whose user may not use a partition's bucket (its users
// rendered with a smaller P than the request names) does not run the
// request: the bucket is unavailable, and the execute gate retries it.
func TestServer_a_partition_its_user_may_not_write_is_not_run(t *testing.T) {
	c := authz.Config{Groups: []authz.Group{{Name: "payments", Tools: []string{"create_invoice"}}}, Partitions: 2}
	_, as := secured(t, c)
	admin, err := jetstreamOf(as(authz.Admin))
	if err != nil {
		t.Fatal(err)
	}
	applyReplayBuckets(t, admin, 3) // partition 2's bucket exists; the users' P is 2
	signer := testSigner(t)
	srv, err := New(as(authz.ExecutorUser("payments")), "payments", "1.0.0", PublicKey(signer.Public()...))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	var runs atomic.Int32
	if err := srv.Handle("create_invoice", func(context.Context, Call) (any, error) { runs.Add(1); return "inv_1", nil }); err != nil {
		t.Fatal(err)
	}
	ex := &execute.NATS{NC: as(authz.Admin), Signer: signer}
	req := execute.Request{Tool: "create_invoice", CallID: "r-2", IdempotencyKey: strings.Repeat("2c", 32), Arguments: json.RawMessage(`{}`), ReplayPartition: 2}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := ex.Execute(ctx, req); !errors.Is(err, execute.ErrNotRun) || runs.Load() != 0 {
		t.Fatalf("partition 2 without the grant: %v (ran %d), want ErrNotRun", err, runs.Load())
	}
	req.ReplayPartition = 1 // granted
	if rep, err := ex.Execute(ctx, req); err != nil || !rep.OK || runs.Load() != 1 {
		t.Fatalf("partition 1: %+v %v (ran %d)", rep, err, runs.Load())
	}
}
