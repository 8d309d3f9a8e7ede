package worker

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

type rig struct {
	js  jetstream.JetStream
	ctx context.Context
}

// newRig makes a stream holding inputs (in.>), outputs (out.>) and dead
// letters (dlq.>) and a durable "stage" consumer on in.>.
func newRig(t *testing.T, ackWait time.Duration, maxDeliver int) rig {
	t.Helper()
	s := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, s)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>", "dlq.>"}, Duplicates: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateConsumer(ctx, "IN", jetstream.ConsumerConfig{
		Durable: "stage", AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait, MaxDeliver: maxDeliver,
	}); err != nil {
		t.Fatal(err)
	}
	return rig{js: js, ctx: ctx}
}

func (r rig) publish(t *testing.T, subj, data string) {
	t.Helper()
	if _, err := r.js.Publish(r.ctx, subj, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

func (r rig) count(t *testing.T, stream, subj string) uint64 {
	t.Helper()
	st, err := r.js.Stream(r.ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(r.ctx, jetstream.WithSubjectFilter(subj))
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n
}

func (r rig) consumerIdle(stage string) func() error {
	return func() error { return testenv.ConsumerIdle(r.ctx, r.js, "IN", stage) }
}

func dlq(m Msg, code string, err error) []Output {
	h := nats.Header{}
	h.Set("Error", err.Error())
	return []Output{{Subject: "dlq." + code, MsgID: fmt.Sprintf("dlq-%d", m.StreamSeq), Header: h, Data: m.Data}}
}

func echo(_ context.Context, m Msg) ([]Output, error) {
	return []Output{{Subject: "out." + string(m.Data), MsgID: "out-" + string(m.Data), Data: m.Data}}, nil
}

func start(t *testing.T, r rig, cfg Config, h Handler) (stop func()) {
	t.Helper()
	if cfg.Stage == "" {
		cfg.Stage = "stage"
	}
	cfg.Stream = "IN"
	if cfg.DeadLetter == nil {
		cfg.DeadLetter = dlq
	}
	w, err := New(r.js, cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if !w.Ready() {
			return errors.New("not ready")
		}
		return nil
	})
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Error("worker did not stop")
		}
	}
	t.Cleanup(stop)
	return stop
}

func TestWorker_publishes_outputs_then_acks(t *testing.T) {
	r := newRig(t, 5*time.Second, 5)
	for i := range 50 {
		r.publish(t, "in.x", fmt.Sprint(i))
	}
	start(t, r, Config{Concurrency: 4, Batch: 10}, echo)
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, r.consumerIdle("stage"))
	if got := r.count(t, "OUT", "out.>"); got != 50 {
		t.Fatalf("outputs %d, want 50", got)
	}
}

func TestWorker_redelivery_after_crash_between_publish_and_ack_does_not_duplicate(t *testing.T) {
	r := newRig(t, 300*time.Millisecond, 5)
	r.publish(t, "in.x", "7")
	// A first replica takes the message, publishes its output, and dies
	// before acking.
	c, err := r.js.Consumer(r.ctx, "IN", "stage")
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		outs, _ := echo(r.ctx, Msg{Data: m.Data()})
		if _, err := r.js.Publish(r.ctx, outs[0].Subject, outs[0].Data, jetstream.WithMsgID(outs[0].MsgID)); err != nil {
			t.Fatal(err)
		}
	}
	// The survivor gets the redelivery after AckWait.
	var handled atomic.Int32
	start(t, r, Config{}, func(ctx context.Context, m Msg) ([]Output, error) {
		handled.Add(1)
		return echo(ctx, m)
	})
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if handled.Load() == 0 {
			return errors.New("not redelivered yet")
		}
		return r.consumerIdle("stage")()
	})
	if got := r.count(t, "OUT", "out.>"); got != 1 {
		t.Fatalf("outputs %d after redelivery, want exactly 1", got)
	}
}

func TestWorker_permanent_error_goes_to_dlq_and_is_not_redelivered(t *testing.T) {
	r := newRig(t, 300*time.Millisecond, 5)
	r.publish(t, "in.x", "bad")
	var calls atomic.Int32
	start(t, r, Config{}, func(context.Context, Msg) ([]Output, error) {
		calls.Add(1)
		return nil, Permanent("undecodable", errors.New("not an envelope"))
	})
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		if r.count(t, "OUT", "dlq.undecodable") != 1 {
			return errors.New("no dead letter yet")
		}
		return r.consumerIdle("stage")()
	})
	time.Sleep(600 * time.Millisecond) // longer than AckWait: a redelivery would show
	if calls.Load() != 1 {
		t.Fatalf("handler called %d times, want 1 (terminated)", calls.Load())
	}
}

func TestWorker_transient_error_retries_then_dead_letters_at_max_deliver(t *testing.T) {
	r := newRig(t, 5*time.Second, 3)
	r.publish(t, "in.x", "flaky")
	var calls atomic.Int32
	start(t, r, Config{Backoff: func(uint64) time.Duration { return 10 * time.Millisecond }},
		func(context.Context, Msg) ([]Output, error) {
			calls.Add(1)
			return nil, errors.New("redis down")
		})
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if r.count(t, "OUT", "dlq.max_deliver") != 1 {
			return fmt.Errorf("no dead letter yet after %d calls", calls.Load())
		}
		return nil
	})
	if calls.Load() != 3 {
		t.Fatalf("handler called %d times, want MaxDeliver=3", calls.Load())
	}
}

func TestWorker_panic_is_dead_lettered_and_worker_goes_on(t *testing.T) {
	r := newRig(t, 5*time.Second, 5)
	r.publish(t, "in.x", "boom")
	r.publish(t, "in.x", "fine")
	start(t, r, Config{}, func(ctx context.Context, m Msg) ([]Output, error) {
		if string(m.Data) == "boom" {
			panic("handler bug")
		}
		return echo(ctx, m)
	})
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		if r.count(t, "OUT", "dlq.panic") != 1 || r.count(t, "OUT", "out.fine") != 1 {
			return errors.New("waiting")
		}
		return nil
	})
}

func TestWorker_dead_letter_that_cannot_be_published_is_naked_not_lost(t *testing.T) {
	r := newRig(t, 5*time.Second, 100)
	r.publish(t, "in.x", "bad")
	var calls atomic.Int32
	nowhere := func(m Msg, code string, err error) []Output {
		return []Output{{Subject: "nowhere." + code, Data: m.Data}} // no stream stores it
	}
	stop := start(t, r, Config{DeadLetter: nowhere}, func(context.Context, Msg) ([]Output, error) {
		calls.Add(1)
		return nil, Permanent("bad", errors.New("bad"))
	})
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if calls.Load() < 2 {
			return errors.New("not redelivered yet")
		}
		return nil
	})
	stop()
	st, err := r.js.Stream(r.ctx, "IN")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetMsg(r.ctx, 1); err != nil {
		t.Fatalf("input lost: %v", err)
	}
	c, _ := r.js.Consumer(r.ctx, "IN", "stage")
	info, err := c.Info(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.AckFloor.Consumer != 0 {
		t.Fatalf("input was settled (ack floor %d) though its dead letter was never stored", info.AckFloor.Consumer)
	}
}

func TestWorker_SIGTERM_drains_in_flight_work(t *testing.T) {
	r := newRig(t, 30*time.Second, 5)
	for i := range 5 {
		r.publish(t, "in.x", fmt.Sprint(i))
	}
	var started atomic.Int32
	stop := start(t, r, Config{Concurrency: 5}, func(ctx context.Context, m Msg) ([]Output, error) {
		started.Add(1)
		time.Sleep(300 * time.Millisecond) // slow work in flight when the stop comes
		return echo(ctx, m)
	})
	testenv.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if started.Load() < 5 {
			return errors.New("not all in flight")
		}
		return nil
	})
	stop() // returns only after draining
	if got := r.count(t, "OUT", "out.>"); got != 5 {
		t.Fatalf("outputs %d after drain, want 5", got)
	}
	if err := r.consumerIdle("stage")(); err != nil {
		t.Fatalf("after drain: %v", err)
	}
}
