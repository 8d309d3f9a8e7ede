package worker

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/testenv"
)

// An output marked After is published only once every output before it is
// stored: when one of those fails, it is never published, and the input is
// nak'ed and kept. Without the hold, the result of a call reached its
// readers though its record was never stored.
func TestWorker_an_After_output_is_never_published_when_one_before_it_fails(t *testing.T) {
	r := newRig(t, 5*time.Second, 100)
	r.publish(t, "in.x", "1")
	var calls atomic.Int32
	stop := start(t, r, Config{}, func(context.Context, Msg) ([]Output, error) {
		calls.Add(1)
		return []Output{
			{Subject: "nowhere.record", MsgID: "record-1", Data: []byte("record")}, // no stream stores it
			{Subject: "out.result", MsgID: "result-1", Data: []byte("result"), After: true},
		}, nil
	})
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if calls.Load() < 2 {
			return errors.New("not redelivered yet")
		}
		return nil
	})
	stop()
	if got := r.count(t, "OUT", "out.result"); got != 0 {
		t.Fatalf("%d results stored though the output before them never was", got)
	}
	c, _ := r.js.Consumer(r.ctx, "IN", "stage")
	info, err := c.Info(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.AckFloor.Consumer != 0 {
		t.Fatalf("input settled (ack floor %d) though an output was never stored", info.AckFloor.Consumer)
	}
}

// Every input's outputs are stored, the held ones after the others: a
// reader that sees out.b.<i> finds out.a.<i> stored.
func TestWorker_an_After_output_is_stored_after_the_outputs_before_it(t *testing.T) {
	r := newRig(t, 5*time.Second, 5)
	const n = 40
	st, err := r.js.Stream(r.ctx, "OUT")
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan *nats.Msg, n)
	sub, err := r.js.Conn().ChanSubscribe("out.b.*", seen)
	if err != nil {
		t.Fatal(err)
	}
	checked := make(chan error, 1)
	go func() { // checks each out.b the moment it is seen
		for range n {
			i := string((<-seen).Data)
			if _, err := st.GetLastMsgForSubject(r.ctx, "out.a."+i); err != nil {
				checked <- fmt.Errorf("out.b.%s seen before out.a.%s was stored: %w", i, i, err)
				return
			}
		}
		checked <- nil
	}()
	for i := range n {
		r.publish(t, "in.x", fmt.Sprint(i))
	}
	start(t, r, Config{Concurrency: 4, Batch: 10}, func(_ context.Context, m Msg) ([]Output, error) {
		i := string(m.Data)
		return []Output{
			{Subject: "out.a." + i, MsgID: "a-" + i, Data: m.Data},
			{Subject: "out.b." + i, MsgID: "b-" + i, Data: m.Data, After: true},
		}, nil
	})
	select {
	case err := <-checked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not every out.b was seen")
	}
	_ = sub.Unsubscribe()
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, r.consumerIdle("stage"))
	if a, b := r.count(t, "OUT", "out.a.>"), r.count(t, "OUT", "out.b.>"); a != n || b != n {
		t.Fatalf("stored %d out.a and %d out.b, want %d each", a, b, n)
	}
	c, _ := r.js.Consumer(r.ctx, "IN", "stage")
	if info, err := c.Info(r.ctx); err != nil || info.AckFloor.Stream != n {
		t.Fatalf("ack floor %v (%v), want every input acked", info, err)
	}
}
