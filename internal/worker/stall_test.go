package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// nats.go v1.55.0's Messages iterator skips the next pull request while the
// previous one's publish has not returned, and when the stage has consumed
// everything in that moment nothing wakes it until two heartbeats are
// missing: the stage stood still 2 x pullHeartbeat (4 s) with input
// pending. Here the worker's connection holds its first pull request's
// write (sent, not yet returned) until the worker has handled the whole
// batch and parked; the rest of the input must follow within the nudge,
// not the heartbeats (internal/natsrepro has the bare client's stand-still).
func TestWorker_does_not_stand_still_when_the_batch_is_consumed_before_its_pull_publish_returns(t *testing.T) {
	const batch = 10
	s := testenv.RunJetStream(t)
	_, pjs := testenv.Connect(t, s)
	ctx := context.Background()
	if _, err := pjs.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pjs.CreateStream(ctx, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"dlq.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pjs.CreateConsumer(ctx, "IN", jetstream.ConsumerConfig{Durable: "stage", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 * batch {
		if _, err := pjs.Publish(ctx, "in.x", fmt.Appendf(nil, "%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	hold := &holdPull{held: make(chan struct{}), release: make(chan struct{})}
	// WriteBufferSize(1): the goroutine publishing the pull request writes
	// it itself, so holding the write holds that goroutine.
	nc, err := nats.Connect(s.ClientURL(), nats.SetCustomDialer(hold), nats.WriteBufferSize(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hold.free(); nc.Close() })
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var handled atomic.Int32
	var longest atomic.Int64 // the stand-still the worker reports
	gap := func(_ string, d time.Duration) {
		if int64(d) > longest.Load() {
			longest.Store(int64(d))
		}
	}
	// No outputs: nothing of the handler waits on the held connection.
	w, err := New(js, Config{Stage: "stage", Stream: "IN", Batch: batch, DeadLetter: dlq, Gap: gap}, func(context.Context, Msg) ([]Output, error) {
		handled.Add(1)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(rctx) }()
	t.Cleanup(func() {
		cancel()
		hold.free()
		<-done
	})

	select {
	case <-hold.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker sent no pull request")
	}
	testenv.Eventually(t, 10*time.Second, time.Millisecond, func() error {
		if n := handled.Load(); n != batch {
			return fmt.Errorf("handled %d of the first batch of %d", n, batch)
		}
		return parked("(*pullSubscription).Next")
	})
	released := time.Now()
	hold.free()
	testenv.Eventually(t, 10*time.Second, time.Millisecond, func() error {
		if n := handled.Load(); n != 2*batch {
			return fmt.Errorf("handled %d of %d", n, 2*batch)
		}
		return nil
	})
	if stood := time.Since(released); stood > pullHeartbeat {
		t.Fatalf("the stage stood still %v with input pending (the heartbeats' 2 x %v), want the nudge's tens of milliseconds", stood, pullHeartbeat)
	}
	// It stood still at least the nudge (the wait began before the release),
	// and said so.
	if d := time.Duration(longest.Load()); d < pullNudge || d > pullHeartbeat {
		t.Fatalf("reported stand-still %v, want between %v and %v", d, pullNudge, pullHeartbeat)
	}
}

// The nudge must not hide a pull request the server never got: the
// iterator's heartbeat monitor notices it within 2 x pullHeartbeat only
// while Next waits without a bound (a Next called again every 20 ms would
// restart the monitor each time and stand still forever); after the
// nudges' 1.26 s it does. The worker's
// first pull request never reaches the server here.
func TestWorker_still_notices_a_lost_pull_request_by_its_missing_heartbeats(t *testing.T) {
	r := newRig(t, 30*time.Second, 5)
	for i := range 3 {
		r.publish(t, "in.x", fmt.Sprint(i))
	}
	lose := &holdPull{held: make(chan struct{}), release: make(chan struct{}), drop: true}
	nc, err := nats.Connect(r.js.Conn().ConnectedUrl(), nats.SetCustomDialer(lose), nats.WriteBufferSize(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var handled atomic.Int32
	start(t, rig{js: js, ctx: r.ctx}, Config{}, func(context.Context, Msg) ([]Output, error) {
		handled.Add(1)
		return nil, nil
	})
	select {
	case <-lose.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker sent no pull request")
	}
	lost := time.Now()
	testenv.Eventually(t, 5*pullHeartbeat, 10*time.Millisecond, func() error {
		if n := handled.Load(); n != 3 {
			return fmt.Errorf("handled %d of 3 after the pull request was lost", n)
		}
		return nil
	})
	if d := time.Since(lost); d < 2*pullHeartbeat {
		t.Fatalf("resumed after %v: the request was not lost?", d)
	}
}

// holdPull dials connections whose Write of the first pull request sends it
// and then returns only once release is closed (drop: does not send it).
type holdPull struct {
	held, release chan struct{}
	drop          bool
	once, freed   sync.Once
	pulls         atomic.Int32
}

func (d *holdPull) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return &holdConn{Conn: c, d: d}, nil
}

func (d *holdPull) free() { d.freed.Do(func() { close(d.release) }) }

type holdConn struct {
	net.Conn
	d *holdPull
}

func (c *holdConn) Write(b []byte) (int, error) {
	first := bytes.Contains(b, []byte("$JS.API.CONSUMER.MSG.NEXT.")) && c.d.pulls.Add(1) == 1
	if first && c.d.drop {
		c.d.once.Do(func() { close(c.d.held) })
		return len(b), nil
	}
	n, err := c.Conn.Write(b)
	if first {
		c.d.once.Do(func() { close(c.d.held) })
		<-c.d.release
	}
	return n, err
}

// parked is nil once a goroutine whose stack holds fn is blocked in a select.
func parked(fn string) error {
	buf := make([]byte, 1<<20)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(g, fn) && strings.Contains(header, "[select") {
			return nil
		}
	}
	return errors.New("no goroutine parked in " + fn)
}

// The worker reports a stand-still: the time it was ready for input while
// input waited on the server and none came (here the 4 s of the race,
// without the nudge: 20 ms; with it, some milliseconds), and never the
// time input was simply not there.
func TestWorker_reports_how_long_the_stage_stood_still_with_input_waiting(t *testing.T) {
	r := newRig(t, 30*time.Second, 5)
	var mu sync.Mutex
	var gaps []time.Duration
	start(t, r, Config{Gap: func(stage string, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if stage != "stage" {
			t.Errorf("gap of stage %q", stage)
		}
		gaps = append(gaps, d)
	}}, echo)
	idle := time.Now()
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if time.Since(idle) < 50*time.Millisecond {
			return errors.New("not idle long enough")
		}
		return nil
	})
	r.publish(t, "in.x", "a")
	r.publish(t, "in.x", "b")
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if r.count(t, "OUT", "out.>") != 2 {
			return errors.New("not handled yet")
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	for _, g := range gaps {
		if g >= 50*time.Millisecond {
			t.Fatalf("reported a stand-still of %v though the stage was idle with nothing to do (gaps %v)", g, gaps)
		}
	}
}
