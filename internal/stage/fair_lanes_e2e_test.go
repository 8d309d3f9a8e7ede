package stage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// streamMsgs is how many messages stream holds (on a work queue: the inputs
// waiting).
func (r fairRig) streamMsgs(stream string) uint64 {
	r.t.Helper()
	s, err := r.js.Stream(r.ctx, stream)
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := s.Info(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	return info.State.Msgs
}

// A quiet tenant's response is turned into calls while a noisy tenant's
// backlog, published before it, still waits in accumulate: each listed
// tenant's inputs come through a lane durable of their own. Before
// accumulate's lanes its one durable read TOOLGATE_IN in stream order, so
// every noisy call reached parse before the first quiet one.
func TestFair_accumulate_takes_a_quiet_tenant_past_a_noisy_backlog(t *testing.T) {
	r := startFairRig(t)
	const noisy, quiet = 1500, 5
	for i := range noisy {
		r.invoice(fmt.Sprintf("noisy-%d", i), "noisy")
	}
	for i := range quiet {
		r.invoice(fmt.Sprintf("quiet-%d", i), "quiet")
	}
	r.run(streams.Accumulate)
	r.waitPending("parse_0i", noisy) // each exactly once
	r.waitPending("parse_1i", quiet)
	gates, err := r.js.Stream(r.ctx, streams.LaneStream(streams.Parse))
	if err != nil {
		t.Fatal(err)
	}
	lastQuiet, err := gates.GetLastMsgForSubject(r.ctx, streams.GateLane(streams.Parse, "1i"))
	if err != nil {
		t.Fatal(err)
	}
	// The next noisy hop stored after the quiet tenant's last one.
	if _, err := gates.GetMsg(r.ctx, lastQuiet.Sequence, jetstream.WithGetMsgSubject(streams.GateLane(streams.Parse, "0i"))); err != nil {
		t.Fatalf("every noisy call passed accumulate before the quiet tenant's last (%v)", err)
	}
	if got := r.pending("parse_0i"); got != noisy {
		t.Fatalf("parse_0i holds %d noisy calls, want %d: one accumulated twice", got, noisy)
	}
}

// What a listed tenant published before its lane existed is the main
// durable's, and what it publishes after is the lane's: turning the list on
// accumulates each response once.
func TestFair_accumulate_lanes_turned_on_handle_each_response_once(t *testing.T) {
	srv := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, srv)
	ctx := context.Background()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	const before, after = 4, 3
	for i := range before { // stored while the deployment has no list
		rid := fmt.Sprintf("before-%d", i)
		(&pipe{t: t, nc: nc, js: js, ctx: ctx}).publish(rid, "openai-chat", chat(rid, "create_invoice", validInvoice, "tool_calls"), streams.HeaderTenant, "quiet")
	}
	r := startFairRigOn(t, srv)                                     // applies fairSettings: accumulate_1 starts after what is stored
	if err := streams.Ensure(ctx, js, fairSettings()); err != nil { // applied again: the lane keeps its start
		t.Fatal(err)
	}
	for i := range after {
		r.invoice(fmt.Sprintf("after-%d", i), "quiet")
	}
	r.run(streams.Accumulate)
	r.waitPending("parse_1i", before+after)
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		for _, d := range []string{streams.Accumulate, streams.AccumulateLane(1)} {
			c, err := js.Consumer(ctx, streams.StreamIn, d)
			if err != nil {
				return err
			}
			info, err := c.Info(ctx)
			if err != nil {
				return err
			}
			if info.NumPending+uint64(info.NumAckPending) != 0 {
				return fmt.Errorf("%s still holds inputs", d)
			}
		}
		return nil
	})
	if got := r.pending("parse_1i"); got != before+after {
		t.Fatalf("parse_1i holds %d calls, want %d: a response accumulated twice or not at all", got, before+after)
	}
}

// A quiet tenant's call runs while a noisy tenant's backlog, waiting for the
// same executor group before it, still waits: each lane of the group has a
// durable, and the group's worker takes from them in turn. Before, the
// group's one durable ran its calls in stream order.
func TestFair_execute_group_runs_a_quiet_tenant_past_a_noisy_backlog(t *testing.T) {
	r := startFairRigOn(t, testenv.RunJetStream(t))
	var mu sync.Mutex
	var order []string // tenant of each executed call, in order
	serveOrder(t, r, func(args string) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(args, "cus_quiet") {
			order = append(order, "quiet")
		} else {
			order = append(order, "noisy")
		}
	})
	r.run(streams.Accumulate, streams.Parse, streams.Validate, streams.Business, streams.Policy, streams.Repair)
	const noisy, quiet = 400, 3
	for i := range noisy {
		r.invoice(fmt.Sprintf("noisy-%d", i), "noisy")
	}
	testenv.Eventually(t, 60*time.Second, 20*time.Millisecond, func() error {
		if got := r.streamMsgs(streams.StreamExecute); got != noisy {
			return fmt.Errorf("%d calls wait for their executor group, want %d", got, noisy)
		}
		return nil
	})
	quietInvoice := strings.Replace(validInvoice, "cus_9821", "cus_quiet", 1)
	for i := range quiet {
		rid := fmt.Sprintf("quiet-%d", i)
		r.publish(rid, "openai-chat", chat(rid, "create_invoice", quietInvoice, "tool_calls"), streams.HeaderTenant, "quiet")
	}
	testenv.Eventually(t, 60*time.Second, 20*time.Millisecond, func() error {
		if got := r.streamMsgs(streams.StreamExecute); got != noisy+quiet {
			return fmt.Errorf("%d calls wait for their executor group, want %d", got, noisy+quiet)
		}
		return nil
	})
	r.run(streams.Execute)
	for i := range quiet {
		r.waitResults(fmt.Sprintf("quiet-%d", i), 1)
	}
	for i := range noisy { // the backlog drains too
		r.waitResults(fmt.Sprintf("noisy-%d", i), 1)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != noisy+quiet {
		t.Fatalf("%d executions, want %d", len(order), noisy+quiet)
	}
	if slices.Contains(order[noisy/2:], "quiet") {
		t.Fatalf("a quiet call ran behind at least half the noisy backlog (last quiet at %d of %d)", slices.Index(order[noisy/2:], "quiet")+noisy/2, len(order))
	}
}

// serveOrder serves create_invoice, telling seen each call's arguments.
func serveOrder(t *testing.T, r fairRig, seen func(args string)) {
	t.Helper()
	serveTools(t, r.nc, []string{"create_invoice"}, func(_ string, c toolserver.Call) (any, error) {
		seen(string(c.Arguments))
		r.executed.Add(1)
		return map[string]any{"ok": true}, nil
	})
}

// A deployment without a tenant list has the consumers it had before fair
// shares, each with its filter: one durable per stage, none per lane, and
// one per executor group on all of the group's subjects.
func TestFair_without_a_tenant_list_the_consumers_are_as_before(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx := context.Background()
	s := streams.DefaultSettings()
	if err := streams.Ensure(ctx, js, s); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		streams.StreamIn:        {"accumulate": strings.Join(streams.InSubjects(), ",")},
		streams.StreamResponses: {"accumulate_r": streams.InClaimedAll()},
		streams.StreamGates: {
			"accumulate_timer": "toolgate.gate.accumulate_timer", "parse": "toolgate.gate.parse,toolgate.gate.parse.*", "validate": "toolgate.gate.validate,toolgate.gate.validate.*",
			"business": "toolgate.gate.business,toolgate.gate.business.*", "policy": "toolgate.gate.policy,toolgate.gate.policy.*",
			"repair": "toolgate.gate.repair,toolgate.gate.repair.*", "execute": "toolgate.gate.execute",
		},
	}
	for _, ls := range streams.LaneStreams() { // the lanes' streams, empty
		want[ls] = map[string]string{}
	}
	for stream, durables := range want {
		st, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for ci := range st.ListConsumers(ctx).Info() {
			got[ci.Name] = ci.Config.FilterSubject + strings.Join(ci.Config.FilterSubjects, ",")
		}
		if fmt.Sprint(got) != fmt.Sprint(durables) {
			t.Errorf("%s consumers:\n got %v\nwant %v", stream, got, durables)
		}
	}
	cs := s.ExecuteGroupConsumers("billing", 4)
	if len(cs) != 1 || cs[0].Name != "execute_g_billing" || cs[0].Subject != "toolgate.gate.execute.g.billing.>" || cs[0].MaxAckPending != 4 {
		t.Errorf("executor group durables %+v, want execute_g_billing on every lane", cs)
	}
	acc, _ := streams.Lookup(streams.Accumulate)
	if g := s.LaneGroups(acc); len(g) != 1 || len(g[0].Durables) != 2 || s.ExecuteGroupLanes("billing") != nil { // accumulate: its main durables of TOOLGATE_IN and TOOLGATE_RESPONSES
		t.Error("a worker without a tenant list reads more than its one durable")
	}
}
