package stage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// A stage whose user may not send pull requests stood idle without a word:
// the server refuses such a publish without answering it, the client
// reported the refusal only to an error handler the stage did not set, and
// the stage's health said ready. The refusal is now in the stage's log.
func TestRun_a_refused_pull_request_is_logged_not_silent(t *testing.T) {
	pw := map[string]string{}
	for _, u := range authz.Names() {
		pw[u] = "pw-" + u
	}
	users, err := natsusers.Users(pw)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range users {
		if u.Username != streams.Parse {
			continue
		}
		found = true
		if u.Permissions.Publish == nil {
			u.Permissions.Publish = &server.SubjectPermission{}
		}
		u.Permissions.Publish.Deny = append(u.Permissions.Publish.Deny, "$JS.API.CONSUMER.MSG.NEXT.>")
	}
	if !found {
		t.Fatalf("no user %s", streams.Parse)
	}
	srv := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	nc, err := nats.Connect(srv.ClientURL(), authz.ClientOptions(authz.Admin, pw[authz.Admin])...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	if err := streams.Ensure(context.Background(), js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	var logged syncBuffer
	runStages(t, Config{
		Seals:   sealtest.Keys(t),
		NATSURL: srv.ClientURL(), NATSOpts: authz.ClientOptions(streams.Parse, pw[streams.Parse]),
		Stages: []string{streams.Parse}, SkipEnsure: true,
		Log: zerolog.New(&logged).Level(zerolog.ErrorLevel),
	}, "parse without pull requests")
	testenv.Eventually(t, 15*time.Second, 50*time.Millisecond, func() error {
		if !strings.Contains(logged.String(), `Permissions Violation for Publish to \"$JS.API.CONSUMER.MSG.NEXT.`) {
			return errors.New("no permission violation in the stage's log")
		}
		return nil
	})
}
