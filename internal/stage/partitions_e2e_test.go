package stage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// partRig is a pipeline whose processes each run with their own P.
type partRig struct {
	*pipe
	url, redis string
	seals      *seal.Keyring
}

func startPartRig(t *testing.T, p int) partRig {
	t.Helper()
	srv := testenv.RunJetStream(t)
	rds := testenv.RunRedis(t)
	nc, js := testenv.Connect(t, srv)
	pp := &pipe{t: t, nc: nc, js: js, ctx: context.Background()}
	if err := streams.Ensure(pp.ctx, js, partSettings(p)); err != nil {
		t.Fatal(err)
	}
	pp.defs = applyTools(t, js, map[string][]byte{"tools.yaml": exampleTools(t)})
	kr, err := seal.Ephemeral(streams.Names())
	if err != nil {
		t.Fatal(err)
	}
	r := partRig{pipe: pp, url: srv.ClientURL(), redis: rds.URL(), seals: kr}
	serveTools(t, nc, []string{"create_invoice"}, func(string, toolserver.Call) (any, error) {
		r.executed.Add(1)
		return map[string]any{"ok": true}, nil
	})
	return r
}

func partSettings(p int) streams.Settings {
	s := streams.DefaultSettings()
	s.Fair.Partitions = p
	return s
}

// run starts stages with P = p and returns what stops them (drained).
func (r partRig) run(p int, stages ...string) (stop func()) {
	r.t.Helper()
	cfg := Config{
		NATSURL: r.url, RedisURL: r.redis, Stages: stages, Settings: partSettings(p), Seals: r.seals,
		PartitionSync: 100 * time.Millisecond, Exec: ExecConfig{Signer: testExecSigner()},
		Log: zerolog.New(zerolog.NewTestWriter(r.t)).Level(zerolog.ErrorLevel),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() { done <- Run(ctx, cfg, ready) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		r.t.Fatalf("%v stopped at start: %v", stages, err)
	case <-time.After(20 * time.Second):
		cancel()
		r.t.Fatalf("%v not ready", stages)
	}
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			r.t.Error(err)
		}
	}
	r.t.Cleanup(stop)
	return stop
}

// msgs is how many messages stream holds.
func (r partRig) msgs(stream string) uint64 {
	r.t.Helper()
	st, err := r.js.Stream(r.ctx, stream)
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := st.Info(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	return info.State.Msgs
}

// exactlyOnce waits for every response's one result and checks that each
// has exactly one and that each call ran once.
func (r partRig) exactlyOnce(rids []string) {
	r.t.Helper()
	for _, rid := range rids {
		r.waitResults(rid, 1)
	}
	testenv.Eventually(r.t, 15*time.Second, 25*time.Millisecond, func() error {
		if n := r.executed.Load(); int(n) != len(rids) {
			return fmt.Errorf("%d calls executed, want %d", n, len(rids))
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond) // room for a second outcome, were there one
	for _, rid := range rids {
		if rs := r.results(rid); len(rs) != 1 {
			r.t.Fatalf("%s has %d results, want exactly 1", rid, len(rs))
		}
	}
	if n := r.executed.Load(); int(n) != len(rids) {
		r.t.Fatalf("%d calls executed, want %d (each once)", n, len(rids))
	}
}

// A backlog stored with P = 2 (parse's hops in both of its partitions)
// drains when the stages start again with P = 1: they read every partition
// stream that exists, whatever their own P. Each call has one outcome.
func TestPartitions_a_backlog_of_P2_drains_with_P1(t *testing.T) {
	r := startPartRig(t, 2)
	stop := r.run(2, streams.Accumulate)
	var rids []string
	for i := range 40 {
		rid := fmt.Sprintf("p2-%d", i)
		rids = append(rids, rid)
		r.publish(rid, "openai-chat", chat(rid, "create_invoice", validInvoice, "tool_calls"), streams.HeaderTenant, "acme")
	}
	part1 := streams.PartitionStream(streams.Parse, 1)
	testenv.Eventually(t, 15*time.Second, 20*time.Millisecond, func() error {
		if n := r.msgs(part1); n == 0 || n == 40 {
			return fmt.Errorf("parse's partition 1 holds %d of 40 hops, want some", n)
		}
		return nil
	})
	stop()
	r.run(1, streams.Accumulate, streams.Parse, streams.Validate, streams.Business, streams.Policy, streams.Repair, streams.Execute)
	r.exactlyOnce(rids)
	if n := r.msgs(part1); n != 0 {
		t.Fatalf("parse's partition 1 still holds %d hops", n)
	}
}

// The reverse: stages running with P = 1 find the partition streams a
// raised P creates (streams apply) and read what a process with P = 3
// publishes there, calls waiting for execute's groups in their
// partitions included. Each call has one outcome.
func TestPartitions_stages_with_P1_find_the_streams_of_a_raised_P(t *testing.T) {
	r := startPartRig(t, 1)
	r.run(1, streams.Accumulate, streams.Parse, streams.Validate, streams.Business, streams.Policy, streams.Repair, streams.Execute)
	var rids []string
	publish := func(prefix string) {
		for i := range 20 {
			rid := fmt.Sprintf("%s-%d", prefix, i)
			rids = append(rids, rid)
			r.publish(rid, "openai-chat", chat(rid, "create_invoice", validInvoice, "tool_calls"), streams.HeaderTenant, "acme")
		}
	}
	publish("before")
	if err := streams.Ensure(r.ctx, r.js, partSettings(3)); err != nil { // streams apply --partitions 3
		t.Fatal(err)
	}
	r.run(3, streams.Accumulate, streams.Policy) // a process with the raised P: its hops go to partitions 1 and 2 too
	publish("after")
	r.exactlyOnce(rids)
	for _, st := range []string{streams.Parse, streams.Execute} { // hops were stored in partitions beyond 0 and taken from there
		durable := st
		if st == streams.Execute {
			durable = streams.ExecuteDurable(authzExampleGroup(t, r))
		}
		testenv.Eventually(t, 15*time.Second, 50*time.Millisecond, func() error {
			var delivered uint64
			for p := 1; p < 3; p++ {
				c, err := r.js.Consumer(r.ctx, streams.PartitionStream(st, p), durable)
				if err != nil {
					return err
				}
				info, err := c.Info(r.ctx)
				if err != nil {
					return err
				}
				delivered += info.Delivered.Stream
			}
			if delivered == 0 {
				return fmt.Errorf("%s: nothing was taken from partitions 1 and 2", st)
			}
			return nil
		})
	}
}

// authzExampleGroup is the executor group of create_invoice.
func authzExampleGroup(t *testing.T, r partRig) string {
	t.Helper()
	for _, d := range r.defs {
		if d.Name == "create_invoice" {
			return d.Group()
		}
	}
	t.Fatal("create_invoice is not defined")
	return ""
}

// A dead group's circuit holds its calls in every partition: its durables
// in partition 0 and in partition 1 are paused with one delivery allowed,
// and when its executor comes back every waiting call runs exactly once
// and both durables get their concurrency back.
func TestPartitions_an_open_circuit_holds_every_partition(t *testing.T) {
	p := startRig(t, rig{
		files: map[string][]byte{"tools.yaml": []byte(bulkheadTools)}, serve: []string{"get_weather"},
		configure: func(c *Config) {
			c.Settings = partSettings(2)
			c.PartitionSync = 100 * time.Millisecond
			c.Circuit = Circuit{Failures: 3, Window: time.Minute, Cooldown: time.Second}
		},
	})
	ctx := context.Background()
	durables := map[string]string{ // stream: erp's durable there
		streams.StreamExecute:                       streams.ExecuteDurable("erp"),
		streams.PartitionStream(streams.Execute, 1): streams.ExecuteDurable("erp"),
	}
	const calls = 30
	for i := range calls {
		rid := fmt.Sprintf("resp-dead-%d", i)
		p.publish(rid, "openai-chat", chat(rid, "erp_invoice", fmt.Sprintf(`{"n":%d}`, i), "tool_calls"))
	}
	for stream, durable := range durables {
		testenv.Eventually(t, 20*time.Second, 20*time.Millisecond, func() error {
			c, err := p.js.Consumer(ctx, stream, durable)
			if err != nil {
				return err
			}
			info, err := c.Info(ctx)
			if err != nil {
				return err
			}
			if info.Config.MaxAckPending != 1 || !info.Paused {
				return fmt.Errorf("erp's durable in %s: MaxAckPending %d, paused %v: want its circuit open", stream, info.Config.MaxAckPending, info.Paused)
			}
			return nil
		})
	}
	p.executorBack(t, calls)
	for stream, durable := range durables {
		testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
			c, err := p.js.Consumer(ctx, stream, durable)
			if err != nil {
				return err
			}
			if got := c.CachedInfo().Config.MaxAckPending; got != 2 {
				return fmt.Errorf("erp's durable in %s: MaxAckPending %d so far, want 2", stream, got)
			}
			return nil
		})
	}
}
