package run

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

func TestTrust_unauthenticated_client_may_only_publish_ingest(t *testing.T) {
	u := clitest.StartUp(t)
	runs, _ := clitest.ServeExamples(t, u)
	anon, denied := clitest.Dial(t, u.URL)

	for _, subj := range []string{streams.Exec(">"), streams.Exec("delete_customer_account"), "$SRV.>", "_INBOX.>", authz.InboxPrefix(authz.Admin) + ".>", streams.ResultsAll(), streams.ProgressAll()} {
		if _, err := anon.Subscribe(subj, func(m *nats.Msg) { t.Errorf("the unauthenticated client received %s", m.Subject) }); err != nil {
			t.Fatal(err)
		}
		if err := anon.Flush(); err != nil {
			t.Fatal(err)
		}
		denied.Of(t, subj)
	}
	// Running a tool directly, purging the input, deleting the dead
	// letters or a consumer, and writing a tool definition are refused.
	for _, subj := range []string{
		streams.Exec("delete_customer_account"),
		"$JS.API.STREAM.PURGE." + streams.StreamIn,
		"$JS.API.STREAM.DELETE." + streams.StreamDLQ,
		"$JS.API.CONSUMER.DELETE." + streams.StreamGates + "." + streams.Execute,
		"$KV." + streams.BucketTools + ".delete_customer_account",
	} {
		if err := anon.PublishMsg(&nats.Msg{Subject: subj, Reply: "_INBOX.x", Data: []byte(`{"customer_id":"cus_1","reason":"x"}`)}); err != nil {
			t.Fatal(err)
		}
		if err := anon.Flush(); err != nil {
			t.Fatal(err)
		}
		denied.Of(t, subj)
	}

	// A response is what it may publish.
	if err := anon.Publish(streams.SubjectInResponse, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := anon.Flush(); err != nil {
		t.Fatal(err)
	}
	_, js, err := cmdutil.Connect(u.URL) // the admin, from the secrets directory
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		st, err := js.Stream(ctx, streams.StreamIn)
		if err != nil {
			return err
		}
		if info, err := st.Info(ctx); err != nil || info.State.LastSeq == 0 {
			return fmt.Errorf("the response did not reach %s: %v", streams.StreamIn, err)
		}
		return nil
	})
	for _, name := range []string{streams.StreamIn, streams.StreamDLQ, streams.StreamGates} {
		if _, err := js.Stream(ctx, name); err != nil {
			t.Errorf("stream %s: %v", name, err)
		}
	}
	if _, err := js.Consumer(ctx, streams.StreamGates, streams.Execute); err != nil {
		t.Errorf("the execute consumer: %v", err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(ctx, "delete_customer_account"); err != nil || e.Revision() != 3 {
		t.Errorf("the definition of delete_customer_account: %v (revision %v), want the one applied at start", err, e)
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("the executor received %d requests from the unauthenticated client", n)
	}
}

func TestTrust_admin_replies_are_private(t *testing.T) {
	u := clitest.StartUp(t)
	_, replies := clitest.ServeExamples(t, u)
	nc, _, err := cmdutil.Connect(u.URL) // the CLI: admin, found in the secrets directory
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Request(streams.Exec("get_weather"), []byte(`{"city":"Oslo"}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := <-replies; !strings.HasPrefix(r, authz.InboxPrefix(authz.Admin)+".") {
		t.Fatalf("the admin's reply subject is %s, want one under %s", r, authz.InboxPrefix(authz.Admin))
	}
	// Nobody else may read them: not a stage, not a producer, not an
	// executor, not the unauthenticated client.
	for _, user := range []string{streams.Parse, authz.Producer, authz.Executor, ""} {
		var opts []nats.Option
		if user != "" {
			opts = authz.ClientOptions(user, u.Password(t, user))
		}
		spy, denied := clitest.Dial(t, u.URL, opts...)
		for _, subj := range []string{authz.InboxPrefix(authz.Admin) + ".>", "_INBOX.>", ">"} {
			if _, err := spy.Subscribe(subj, func(m *nats.Msg) { t.Errorf("%q read %s", user, m.Subject) }); err != nil {
				t.Fatal(err)
			}
			if err := spy.Flush(); err != nil {
				t.Fatal(err)
			}
			denied.Of(t, subj)
		}
	}
	// The CLI's JetStream calls are answered on the same private prefix.
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatalf("the admin's JetStream request: %v", err)
	}
}
