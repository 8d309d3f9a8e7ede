package stage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// fairSettings: two listed tenants, noisy in lane 0 and quiet in lane 1;
// tenant bulk's calls are batch unless they say otherwise.
func fairSettings() streams.Settings {
	s := streams.DefaultSettings()
	s.Fair = streams.Fair{Lanes: 4, Tenants: []string{"noisy", "quiet", "bulk"}, Priority: map[string]string{"bulk": streams.PriorityBatch}}
	return s
}

// fairRig is a pipeline whose stages start in two steps: accumulate alone
// (the calls it makes wait in their parse lanes), then the rest.
type fairRig struct {
	*pipe
	url, redis string
	seals      *seal.Keyring
}

func startFairRig(t *testing.T) fairRig {
	t.Helper()
	r := startFairRigOn(t, testenv.RunJetStream(t))
	serveTools(t, r.nc, []string{"create_invoice"}, func(string, toolserver.Call) (any, error) {
		r.executed.Add(1)
		return map[string]any{"ok": true}, nil
	})
	return r
}

// startFairRigOn is the rig on srv, with no executor yet.
func startFairRigOn(t *testing.T, srv *server.Server) fairRig {
	t.Helper()
	rds := testenv.RunRedis(t)
	nc, js := testenv.Connect(t, srv)
	p := &pipe{t: t, nc: nc, js: js, ctx: context.Background()}
	if err := streams.Ensure(p.ctx, js, fairSettings()); err != nil {
		t.Fatal(err)
	}
	p.defs = applyTools(t, js, map[string][]byte{"tools.yaml": exampleTools(t)})
	kr, err := seal.Ephemeral(streams.Names())
	if err != nil {
		t.Fatal(err)
	}
	return fairRig{pipe: p, url: srv.ClientURL(), redis: rds.URL(), seals: kr}
}

func (r fairRig) run(stages ...string) {
	r.t.Helper()
	runStages(r.t, Config{
		NATSURL: r.url, RedisURL: r.redis, Stages: stages, Settings: fairSettings(), Seals: r.seals,
		Log: zerolog.New(zerolog.NewTestWriter(r.t)).Level(zerolog.ErrorLevel),
	}, fmt.Sprint(stages))
}

func (r fairRig) invoice(rid, tenant string, extra ...string) {
	r.t.Helper()
	r.publish(rid, "openai-chat", chat(rid, "create_invoice", validInvoice, "tool_calls"), append([]string{streams.HeaderTenant, tenant}, extra...)...)
}

// durableStream is the stream of a gate stage's durable, <stage> or
// <stage>_<lane>.
func durableStream(durable string) string {
	stage, _, _ := strings.Cut(durable, "_")
	return streams.DurableStream(stage, durable)
}

// pending is how many inputs wait on durable.
func (r fairRig) pending(durable string) uint64 {
	r.t.Helper()
	c, err := r.js.Consumer(r.ctx, durableStream(durable), durable)
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := c.Info(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	return info.NumPending + uint64(info.NumAckPending)
}

func (r fairRig) waitPending(durable string, n uint64) {
	r.t.Helper()
	testenv.Eventually(r.t, 30*time.Second, 20*time.Millisecond, func() error {
		if got := r.pending(durable); got != n {
			return fmt.Errorf("%s holds %d, want %d", durable, got, n)
		}
		return nil
	})
}

// A quiet tenant's calls run while a noisy tenant's backlog, stored in its
// own lane before them, still waits: with one subject per stage (before
// lanes) every noisy call ran first.
func TestFair_quiet_tenant_finishes_before_the_noisy_backlog_drains(t *testing.T) {
	r := startFairRig(t)
	r.run(streams.Accumulate)
	const noisy, quiet = 600, 5
	for i := range noisy {
		r.invoice(fmt.Sprintf("noisy-%d", i), "noisy")
	}
	r.waitPending("parse_0i", noisy)
	for i := range quiet {
		r.invoice(fmt.Sprintf("quiet-%d", i), "quiet")
	}
	r.waitPending("parse_1i", quiet)
	r.run(streams.Parse, streams.Validate, streams.Business, streams.Policy, streams.Repair, streams.Execute)
	for i := range quiet {
		r.waitResults(fmt.Sprintf("quiet-%d", i), 1)
	}
	if done := r.pipe.executed.Load(); done >= noisy+quiet {
		t.Fatalf("every noisy call (%d executed) ran before the quiet tenant's last", done)
	}
	for i := range noisy { // and the backlog still drains
		r.waitResults(fmt.Sprintf("noisy-%d", i), 1)
	}
}

// Toolgate-Priority puts a response's calls in its tenant's interactive or
// batch lane; none: the tenant's default (bulk: batch); a value that is
// neither is dropped for the default. The envelope keeps it, so the next
// hop is in the same lane.
func TestFair_priority_picks_the_lane_and_stays_with_the_call(t *testing.T) {
	r := startFairRig(t)
	r.run(streams.Accumulate)
	r.invoice("q-batch", "quiet", streams.HeaderPriority, "batch")
	r.invoice("q-plain", "quiet")
	r.invoice("b-default", "bulk")
	r.invoice("b-inter", "bulk", streams.HeaderPriority, "interactive")
	r.invoice("b-junk", "bulk", streams.HeaderPriority, "urgent!!")
	r.waitPending("parse_1b", 1)
	r.waitPending("parse_1i", 1)
	r.waitPending("parse_2b", 2)
	r.waitPending("parse_2i", 1)
	r.run(streams.Parse)
	r.waitPending("validate_1b", 1)
	r.waitPending("validate_2b", 2)
	r.waitPending("validate_2i", 1)
}

// What was published on a stage's lane-less subject before the upgrade
// (and what approvals and replays publish there) is read by the stage's
// main durable and runs to its result.
func TestFair_legacy_subject_still_drains(t *testing.T) {
	r := startFairRig(t)
	r.run(streams.Accumulate)
	r.invoice("legacy", "quiet")
	r.waitPending("parse_1i", 1)
	// Move the hop to the subject of before lanes, as it was stored then.
	c, err := r.js.Consumer(r.ctx, durableStream("parse_1i"), "parse_1i")
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Next()
	if err != nil {
		t.Fatal(err)
	}
	old := &nats.Msg{Subject: streams.Gate(streams.Parse), Header: m.Headers(), Data: m.Data()}
	old.Header.Del(nats.MsgIdHdr) // stored long ago: its id is out of the dedup window
	if _, err := r.js.PublishMsg(r.ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := m.Ack(); err != nil {
		t.Fatal(err)
	}
	r.waitPending("parse_1i", 0)
	r.waitPending(streams.Parse, 1)
	r.run(streams.Parse, streams.Validate, streams.Business, streams.Policy, streams.Repair, streams.Execute)
	if res := r.waitResults("legacy", 1); res[0]["status"] != "executed" {
		t.Fatalf("result %v", res[0])
	}
	r.waitPending(streams.Parse, 0)
}

// A stage's lane hops are stored by its own stream (TOOLGATE_GATE_<STAGE>),
// none by TOOLGATE_GATES: with every lane in TOOLGATE_GATES each
// acknowledgement's interest check walked 5 x (2L+1) durables, and a
// cluster had one leader for every hop.
func TestFair_each_stage_stores_its_lane_hops_in_its_own_stream(t *testing.T) {
	r := startFairRig(t)
	r.run(streams.Accumulate)
	const n = 6
	for i := range n {
		r.invoice(fmt.Sprintf("own-%d", i), []string{"noisy", "quiet"}[i%2])
	}
	msgs := func(want map[string]uint64) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
			for stream, w := range want {
				if got := r.streamMsgs(stream); got != w {
					return fmt.Errorf("%s holds %d hops, want %d", stream, got, w)
				}
			}
			return nil
		})
	}
	msgs(map[string]uint64{streams.LaneStream(streams.Parse): n, streams.StreamGates: 0, streams.LaneStream(streams.Validate): 0})
	r.waitPending("parse_0i", n/2)
	r.waitPending("parse_1i", n/2)
	r.run(streams.Parse)
	msgs(map[string]uint64{streams.LaneStream(streams.Parse): 0, streams.StreamGates: 0, streams.LaneStream(streams.Validate): n})
	r.waitPending("validate_1i", n/2)
}

// The upgrade from the lanes in TOOLGATE_GATES: a hop stored on a lane
// subject of before (toolgate.gate.<stage>.<lane>, with its lane durable
// there) behind the main durable's position is handled once after the
// streams are applied again: Ensure deletes the old lane durable and
// creates the main durable again, which reads the old lanes too.
func TestFair_hop_on_an_old_lane_subject_is_handled_once_after_the_upgrade(t *testing.T) {
	r := startFairRig(t)
	r.run(streams.Accumulate)
	r.invoice("oldlane", "quiet")
	r.waitPending("parse_1i", 1)
	c, err := r.js.Consumer(r.ctx, durableStream("parse_1i"), "parse_1i")
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Next()
	if err != nil {
		t.Fatal(err)
	}
	// The layout of before: parse's main durable on its subject only, a
	// lane durable in TOOLGATE_GATES, the hop stored on its subject there.
	gates, err := r.js.Stream(r.ctx, streams.StreamGates)
	if err != nil {
		t.Fatal(err)
	}
	if err := gates.DeleteConsumer(r.ctx, streams.Parse); err != nil {
		t.Fatal(err)
	}
	old := streams.DefaultSettings().Config(streams.Consumer{Name: streams.Parse, Subject: streams.Gate(streams.Parse)})
	if _, err := gates.CreateConsumer(r.ctx, old); err != nil {
		t.Fatal(err)
	}
	oldLane := streams.DefaultSettings().Config(streams.Consumer{Name: "parse_1i", Subject: streams.LegacyGateLane(streams.Parse, "1i")})
	if _, err := gates.CreateConsumer(r.ctx, oldLane); err != nil {
		t.Fatal(err)
	}
	hop := &nats.Msg{Subject: streams.LegacyGateLane(streams.Parse, "1i"), Header: m.Headers(), Data: m.Data()}
	hop.Header.Del(nats.MsgIdHdr) // stored long ago: its id is out of the dedup window
	if _, err := r.js.PublishMsg(r.ctx, hop); err != nil {
		t.Fatal(err)
	}
	if err := m.Ack(); err != nil {
		t.Fatal(err)
	}
	// The main durable passes it: a hop on its own subject, stored after,
	// delivered and acknowledged (its position is now past the old hop).
	if _, err := r.js.Publish(r.ctx, streams.Gate(streams.Parse), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	main, err := gates.Consumer(r.ctx, streams.Parse)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := main.Next()
	if err != nil {
		t.Fatal(err)
	}
	if err := pm.Ack(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if got := r.streamMsgs(streams.StreamGates); got != 1 {
			return fmt.Errorf("%s holds %d hops, want the old lane's", streams.StreamGates, got)
		}
		return nil
	})

	if err := streams.Ensure(r.ctx, r.js, fairSettings()); err != nil { // the upgrade
		t.Fatal(err)
	}
	for ci := range gates.ListConsumers(r.ctx).Info() {
		if strings.HasPrefix(ci.Name, streams.Parse+"_") {
			t.Errorf("old lane durable %s is still in %s", ci.Name, streams.StreamGates)
		}
	}
	r.waitPending(streams.Parse, 1)
	r.run(streams.Parse, streams.Validate, streams.Business, streams.Policy, streams.Repair, streams.Execute)
	if res := r.waitResults("oldlane", 1); res[0]["status"] != "executed" {
		t.Fatalf("result %v", res[0])
	}
	r.waitPending(streams.Parse, 0)
	if err := streams.Ensure(r.ctx, r.js, fairSettings()); err != nil { // applied again: nothing left to move
		t.Fatal(err)
	}
	r.invoice("after", "quiet")
	r.waitResults("after", 1)
	if got := len(r.results("oldlane")); got != 1 || r.executed.Load() != 2 {
		t.Fatalf("%d results for the old hop, %d executions, want 1 and 2", got, r.executed.Load())
	}
}
