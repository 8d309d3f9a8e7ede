package bench_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/benchrig"
	"github.com/toolgate/toolgate/internal/testenv"
)

// startExternal starts a nats-server apart from any rig, with its
// monitoring port open, as an operator's own server for the bench.
func startExternal(t *testing.T, adjust func(*server.Options)) (*testenv.NATS, string) {
	t.Helper()
	n, err := testenv.StartNATS(testenv.NATSOptions{StoreDir: t.TempDir(), Adjust: func(o *server.Options) {
		o.HTTPHost, o.HTTPPort = "127.0.0.1", -1
		if adjust != nil {
			adjust(o)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	addr := n.Server().MonitorAddr()
	if addr == nil {
		t.Fatal("the server has no monitoring port")
	}
	return n, "http://" + addr.String()
}

// The bench's pipeline step on an external server: the rig starts no
// embedded server, the traffic figures are that server's (read over its
// monitoring port: messages and stores moved, no more than the server
// itself counted), and Close leaves none of toolgate's streams behind.
func TestBench_pipeline_on_an_external_server_reads_that_servers_counters(t *testing.T) {
	ext, monitor := startExternal(t, nil)
	ctx := context.Background()
	counters, done, err := bench.OpenCounters(ctx, monitor)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	r, err := benchrig.Start(benchrig.Options{Dir: t.TempDir(), ToolsFile: "../../examples/tools.yaml", NATSURL: ext.URL(), Counters: counters})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			r.Close()
		}
	})
	if r.NATS != nil {
		t.Fatal("the rig started an embedded nats-server beside the external one")
	}
	if _, ok := r.Counters.(bench.Monitor); !ok {
		t.Fatalf("counters %T, want the external server's monitoring port", r.Counters)
	}
	v0, err := ext.Server().Varz(&server.VarzOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t0, err := bench.ReadTraffic(ctx, r.Counters, r.JS)
	if err != nil {
		t.Fatal(err)
	}
	const calls = 300
	st, _, err := bench.LoadAs(ctx, r.NC, r.JS, "", "ext-", calls, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Count != calls {
		t.Fatalf("%d results, want %d", st.Count, calls)
	}
	t1, err := bench.ReadTraffic(ctx, r.Counters, r.JS)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := ext.Server().Varz(&server.VarzOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := t1.Since(t0)
	per := d.Per(calls)
	if per.Stores < 1 || per.Messages < 1 {
		t.Fatalf("per call %.1f stores, %.1f messages: want each call's publish at least", per.Stores, per.Messages)
	}
	if server := (v1.InMsgs - v0.InMsgs) + (v1.OutMsgs - v0.OutMsgs); d.InMsgs+d.OutMsgs > server {
		t.Fatalf("the bench read %d messages, the external server counted only %d in that time", d.InMsgs+d.OutMsgs, server)
	}
	// Counters that cannot be read leave the messages out, not the stores.
	none, err := bench.ReadTraffic(ctx, bench.NoCounters{Why: "test"}, r.JS)
	if err != nil || none.InMsgs != 0 || none.OutMsgs != 0 || none.Stores < t1.Stores {
		t.Fatalf("unavailable counters: %+v, %v; want no messages and the stores (%d)", none, err, t1.Stores)
	}

	closed = true
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	nc, js := testenv.Connect(t, ext.Server())
	defer nc.Close()
	for name := range js.StreamNames(ctx).Name() {
		t.Errorf("stream %s left on the external server", name)
	}
}

// A server that holds toolgate's streams is a deployment's (or a bench's
// left behind): the rig refuses it before applying anything, and leaves
// its data as it was.
func TestBench_refuses_a_server_holding_toolgate_streams(t *testing.T) {
	ext, _ := startExternal(t, nil)
	ctx := context.Background()
	nc, js := testenv.Connect(t, ext.Server())
	defer nc.Close()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "TOOLGATE_IN", Subjects: []string{"deployment.in.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "deployment.in.x", []byte("a deployment's call")); err != nil {
		t.Fatal(err)
	}
	r, err := benchrig.Start(benchrig.Options{Dir: t.TempDir(), ToolsFile: "../../examples/tools.yaml", NATSURL: ext.URL()})
	if err == nil {
		r.Close()
		t.Fatal("the rig ran on a server holding toolgate's streams")
	}
	if !strings.Contains(err.Error(), "TOOLGATE_IN (1 messages)") {
		t.Fatalf("error %v, want it to name TOOLGATE_IN and its message", err)
	}
	var names []string
	for name := range js.StreamNames(ctx).Name() {
		names = append(names, name)
	}
	st, err := js.Stream(ctx, "TOOLGATE_IN")
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := st.Info(ctx); len(names) != 1 || info.State.Msgs != 1 {
		t.Fatalf("streams %v, TOOLGATE_IN holding %d messages; want it alone and untouched", names, info.State.Msgs)
	}
}

// Over the system account the counters are the same Varz: a publish by a
// user of another account moves them.
func TestOpenCounters_over_the_system_account(t *testing.T) {
	ext, _ := startExternal(t, func(o *server.Options) {
		app, sys := server.NewAccount("APP"), server.NewAccount("SYS")
		o.Accounts, o.SystemAccount = []*server.Account{app, sys}, "SYS"
		o.Users = []*server.User{{Username: "app", Password: "app", Account: app}, {Username: "sys", Password: "sys", Account: sys}}
	})
	ctx := context.Background()
	u := strings.TrimPrefix(ext.URL(), "nats://")
	c, done, err := bench.OpenCounters(ctx, "nats://sys:sys@"+u)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if _, ok := c.(bench.System); !ok {
		t.Fatalf("counters %T, want the system account's", c)
	}
	v0, err := c.Varz(ctx)
	if err != nil {
		t.Fatal(err)
	}
	app, err := nats.Connect("nats://app:app@" + u)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	for range 50 {
		if err := app.Publish("anything", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Flush(); err != nil {
		t.Fatal(err)
	}
	v1, err := c.Varz(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := v1.InMsgs - v0.InMsgs; got < 50 {
		t.Fatalf("in messages moved by %d over 50 publishes", got)
	}
	// Without a way to read them the counters are unavailable, and say why.
	none, _, err := bench.OpenCounters(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.Varz(ctx); !errors.Is(err, bench.ErrNoCounters) || !strings.Contains(err.Error(), "--nats-monitor") {
		t.Fatalf("no --nats-monitor: %v, want ErrNoCounters saying what to give", err)
	}
}
