package worker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// A quiet lane's input that arrives while a noisy lane's backlog flows is
// handled after at most a few of the noisy inputs already pulled, not
// after the noisy share's whole budget (Weight x Quantum): the shares take
// turns one input at a time. Before, the round robin handed the noisy
// share its budget in one go, and the quiet input waited for all of it in
// every stage it passed (bench --neighbour: the quiet tenant's tail).
func TestFair_a_quiet_input_waits_for_one_turn_not_a_budget(t *testing.T) {
	r := fairRig(t, "noisy", "quiet")
	r.backlog(t, "noisy", 400)
	var mu sync.Mutex
	var seen []string
	quietAt := -1
	h := func(_ context.Context, m Msg) ([]Output, error) {
		time.Sleep(2 * time.Millisecond) // a busy stage: its handler is the bottleneck
		mu.Lock()
		defer mu.Unlock()
		if string(m.Data) == "quiet" {
			quietAt = len(seen)
		}
		seen = append(seen, string(m.Data))
		return nil, nil
	}
	const quantum = 50
	w, err := New(r.js, Config{Stage: "stage", Stream: "IN", Quantum: quantum, Shares: []Share{{Durables: []string{"noisy"}}, {Durables: []string{"quiet"}}}, DeadLetter: dlq}, h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	handled := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
	testenv.Eventually(t, 30*time.Second, time.Millisecond, func() error {
		if n := handled(); n < 10 {
			return fmt.Errorf("%d noisy inputs handled", n)
		}
		return nil
	})
	if _, err := r.js.Publish(r.ctx, "in.quiet", []byte("quiet")); err != nil {
		t.Fatal(err)
	}
	before := handled() // the quiet input is stored: what is handled from here on was pulled with it or before
	testenv.Eventually(t, 30*time.Second, time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if quietAt < 0 {
			return fmt.Errorf("quiet input not handled; %d noisy inputs handled", len(seen))
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	// One in the handler, one handed to it, and a turn or two while the
	// quiet input travels from the server to its lane's queue.
	if waited := quietAt - before; waited > 8 {
		t.Fatalf("the quiet input waited behind %d noisy inputs (the noisy share's budget is %d)", waited, quantum)
	}
}

// tagged is an input the round robin hands out, named by its durable.
type tagged struct {
	jetstream.Msg
	lane string
}

// Within a round, a share with work gets one input per pass: an input that
// arrives on a quiet durable while a noisy one has its whole budget
// waiting is handed out next pass.
func TestRoundRobin_shares_take_turns_within_a_round(t *testing.T) {
	rr := newRoundRobin([]Share{{Durables: []string{"noisy"}}, {Durables: []string{"quiet", "quietb"}, Floor: 10}}, 8)
	for range laneBuffer {
		rr.queues[0] <- tagged{lane: "noisy"}
	}
	var order []string
	rr.round(func(m jetstream.Msg) {
		order = append(order, m.(tagged).lane)
		if len(order) == 1 {
			rr.queues[1] <- tagged{lane: "quiet"}
		}
	})
	want := []string{"noisy", "quiet", "noisy", "noisy", "noisy", "noisy", "noisy", "noisy", "noisy"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("handed out %v, want %v", order, want)
	}
}
