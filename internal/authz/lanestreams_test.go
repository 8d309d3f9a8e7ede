package authz_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// runLaned starts a server with every user of authz's default config and
// applies the topology with lanes as the admin.
func runLaned(t *testing.T) *server.Server {
	t.Helper()
	pw := map[string]string{}
	for _, u := range authz.Names() {
		pw[u] = "pw-" + u
	}
	users, err := natsusers.Users(pw)
	if err != nil {
		t.Fatal(err)
	}
	s := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	js := connect(t, s, authz.Admin)
	set := streams.DefaultSettings()
	set.Fair = streams.Fair{Lanes: 2}
	if err := streams.Ensure(context.Background(), js, set); err != nil {
		t.Fatal(err)
	}
	return s
}

// runUsers starts a server with the users of c, each with the password
// pw-<user>.
func runUsers(t *testing.T, c authz.Config) *server.Server {
	t.Helper()
	pw := map[string]string{}
	for _, u := range c.Names() {
		pw[u] = "pw-" + u
	}
	users, err := natsusers.ConfigUsers(c, pw)
	if err != nil {
		t.Fatal(err)
	}
	return testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
}

func connect(t *testing.T, s *server.Server, user string) jetstream.JetStream {
	t.Helper()
	js, _ := connectWatched(t, s, user)
	return js
}

// connectWatched is connect, with the permission violations the server
// reports to the connection.
func connectWatched(t *testing.T, s *server.Server, user string) (jetstream.JetStream, *testenv.Violations) {
	t.Helper()
	v := &testenv.Violations{}
	nc, err := nats.Connect(s.ClientURL(), append(authz.ClientOptions(user, "pw-"+user), nats.ErrorHandler(v.Handler))...)
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js, v
}

// Each laned stage's user takes and acknowledges hops from the durables of
// its own lanes' stream, and the server refuses it any other stage's lanes'
// stream: a durable there, a fetch, a new durable, and a publish of a hop
// into a stage it does not route to. The console reads the lanes' durables
// and hops but takes none.
func TestLaneStreams_each_stage_consumes_only_its_own(t *testing.T) {
	s := runLaned(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := connect(t, s, authz.Admin)
	if _, err := admin.Publish(ctx, streams.GateLane(streams.Validate, "1i"), []byte("hop")); err != nil {
		t.Fatal(err)
	}
	js, denied := connectWatched(t, s, streams.Validate)
	own, err := js.Consumer(ctx, streams.LaneStream(streams.Validate), "validate_1i")
	if err != nil {
		t.Fatalf("validate looking up its own lane: %v", err)
	}
	msgs, err := own.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for m := range msgs.Messages() {
		got++
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatalf("validate acknowledging its own lane's hop: %v", err)
		}
	}
	if got != 1 {
		t.Fatalf("validate fetched %d hops from its own lane (%v), want 1", got, msgs.Error())
	}

	for _, other := range []string{streams.Parse, streams.Business, streams.Policy, streams.Repair} {
		lanes := streams.LaneStream(other)
		info := "$JS.API.CONSUMER.INFO." + lanes + "." + other + "_1i"
		testenv.Refused(t, "validate looking up "+other+"'s lane durable", func() error { return denied.Saw(info) },
			func(c context.Context) error { _, err := js.Consumer(c, lanes, other+"_1i"); return err })
		create := "$JS.API.CONSUMER.CREATE." + lanes + ".sneak"
		testenv.Refused(t, "validate creating a durable in "+lanes, func() error { return denied.SawPrefix(create) },
			func(c context.Context) error {
				_, err := js.CreateOrUpdateConsumer(c, lanes, jetstream.ConsumerConfig{Durable: "sneak", FilterSubject: streams.GateLane(other, "9i"), AckPolicy: jetstream.AckExplicitPolicy})
				return err
			})
	}
	// A durable of another stage's stream, taken by name through the API:
	// refused before the server answers.
	if _, err := admin.Publish(ctx, streams.GateLane(streams.Policy, "0i"), []byte("policy's")); err != nil {
		t.Fatal(err)
	}
	ajs := admin
	pc, err := ajs.Consumer(ctx, streams.LaneStream(streams.Policy), "policy_0i")
	if err != nil {
		t.Fatal(err)
	}
	policyInfo := "$JS.API.CONSUMER.INFO." + streams.LaneStream(streams.Policy) + ".policy_0i"
	testenv.Refused(t, "validate binding policy's lane durable", func() error { return denied.Saw(policyInfo) },
		func(c context.Context) error {
			_, err := js.Consumer(c, streams.LaneStream(streams.Policy), "policy_0i")
			return err
		})
	// Nothing validate may publish reaches policy: it routes to business.
	policyLane := streams.GateLane(streams.Policy, "0i")
	testenv.Refused(t, "validate publishing a hop into policy's lanes", func() error { return denied.Saw(policyLane) },
		func(c context.Context) error {
			_, err := js.Publish(c, policyLane, []byte("skip"), jetstream.WithRetryAttempts(0))
			return err
		})
	if _, err := js.Publish(ctx, streams.GateLane(streams.Business, "0i"), []byte("next")); err != nil {
		t.Errorf("validate handing a call to business: %v", err)
	}
	info, err := pc.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumPending != 1 || info.Delivered.Consumer != 0 {
		t.Errorf("policy's lane: pending %d, delivered %d, want its one hop untouched", info.NumPending, info.Delivered.Consumer)
	}

	// The console lists the lanes' durables and reads their hops, and takes none.
	cjs := connect(t, s, authz.Console)
	st, err := cjs.Stream(ctx, streams.LaneStream(streams.Policy))
	if err != nil {
		t.Fatalf("console reading %s: %v", streams.LaneStream(streams.Policy), err)
	}
	n := 0
	for range st.ListConsumers(ctx).Info() {
		n++
	}
	if n != 4 {
		t.Errorf("console listed %d durables of %s, want 4", n, streams.LaneStream(streams.Policy))
	}
	if _, err := st.GetMsg(ctx, 1); err != nil {
		t.Errorf("console reading policy's hop: %v", err)
	}
	// It reads a lane durable's info (the overview's backlog) and cannot
	// fetch from it.
	cc, err := cjs.Consumer(ctx, streams.LaneStream(streams.Policy), "policy_0i")
	if err != nil {
		t.Fatalf("console reading policy's lane durable: %v", err)
	}
	if b, err := cc.Fetch(1, jetstream.FetchMaxWait(700*time.Millisecond)); err == nil {
		for range b.Messages() {
			t.Error("console fetched policy's hop")
		}
	}
	if info, err := pc.Info(ctx); err != nil || info.Delivered.Consumer != 0 {
		t.Errorf("policy's lane after the console's fetch: %+v, %v; want nothing delivered", info, err)
	}
}
