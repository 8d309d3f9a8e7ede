package worker

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// fairRig is a stream IN with one durable per lane, lane <name> filtering
// in.<name>, with backlog published before any worker runs.
func fairRig(t *testing.T, lanes ...string) rig {
	t.Helper()
	s := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, s)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}, Retention: jetstream.WorkQueuePolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>", "dlq.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, l := range lanes {
		if _, err := js.CreateConsumer(ctx, "IN", jetstream.ConsumerConfig{
			Durable: l, FilterSubject: "in." + l, AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 2000,
		}); err != nil {
			t.Fatal(err)
		}
	}
	return rig{js: js, ctx: ctx}
}

func (r rig) backlog(t *testing.T, lane string, n int) {
	t.Helper()
	for i := range n {
		if _, err := r.js.PublishAsync("in."+lane, []byte(lane)); err != nil {
			t.Fatal(err)
		}
		if i%500 == 499 {
			<-r.js.PublishAsyncComplete()
		}
	}
	select {
	case <-r.js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatal("backlog not stored")
	}
}

// order runs a worker over shares until want inputs were handled and
// returns the lanes of the inputs in the order the handler saw them.
func (r rig) order(t *testing.T, shares []Share, want int, pause time.Duration) []string {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	all := make(chan struct{})
	h := func(_ context.Context, m Msg) ([]Output, error) {
		time.Sleep(pause)
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, string(m.Data))
		if len(seen) == want {
			close(all)
		}
		return nil, nil
	}
	w, err := New(r.js, Config{Stage: "stage", Stream: "IN", Shares: shares, DeadLetter: dlq}, h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case <-all:
	case <-time.After(60 * time.Second):
		t.Fatalf("handled %d of %d", len(seen), want)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(seen)
}

// A quiet lane's inputs are handled while a noisy lane's backlog, stored
// before them, still waits: one durable read in order (the layout before
// lanes) handles every noisy input first.
func TestFair_quiet_lane_finishes_before_the_noisy_backlog(t *testing.T) {
	r := fairRig(t, "noisy", "quiet")
	r.backlog(t, "noisy", 3000)
	r.backlog(t, "quiet", 20)
	seen := r.order(t, []Share{{Durables: []string{"noisy"}}, {Durables: []string{"quiet"}}}, 3020, 0)
	last := slices.Index(seen, "quiet")
	for i, l := range seen {
		if l == "quiet" {
			last = i
		}
	}
	noisyBefore := 0
	for _, l := range seen[:last] {
		if l == "noisy" {
			noisyBefore++
		}
	}
	if noisyBefore > 1500 {
		t.Fatalf("the last quiet input waited behind %d of 3000 noisy ones", noisyBefore)
	}
}

// Interactive inputs go first within a share; batch ones keep their floor
// meanwhile, and take the whole share once no interactive one waits.
func TestFair_interactive_first_batch_not_starved(t *testing.T) {
	r := fairRig(t, "i", "b")
	r.backlog(t, "b", 400)
	r.backlog(t, "i", 400)
	seen := r.order(t, []Share{{Durables: []string{"i", "b"}, Floor: 10}}, 800, 200*time.Microsecond)
	first := strings.Join(seen[:200], "")
	if n := strings.Count(first, "i"); n < 150 {
		t.Errorf("%d of the first 200 inputs were interactive, want most (batch was stored first)", n)
	}
	lastI := 0
	for i, l := range seen {
		if l == "i" {
			lastI = i
		}
	}
	if b := strings.Count(strings.Join(seen[:lastI], ""), "b"); b < 20 {
		t.Errorf("batch got %d inputs while interactive ones waited: starved", b)
	}
}

// A share's weight is its part of each round: weight 3 against weight 1
// takes about three inputs to the other's one while both have backlog.
func TestFair_weights_divide_the_rounds(t *testing.T) {
	r := fairRig(t, "heavy", "light")
	r.backlog(t, "heavy", 600)
	r.backlog(t, "light", 600)
	seen := r.order(t, []Share{{Durables: []string{"heavy"}, Weight: 3}, {Durables: []string{"light"}, Weight: 1}}, 1200, 100*time.Microsecond)
	n := strings.Count(strings.Join(seen[:400], ","), "heavy")
	if n < 240 || n > 340 {
		t.Errorf("heavy got %d of the first 400 inputs, want about 300", n)
	}
}

// One lane with work gets the whole worker: a round skips the empty ones.
func TestRoundRobin_a_lone_lane_takes_the_whole_round(t *testing.T) {
	rr := newRoundRobin([]Share{{Durables: []string{"a"}}, {Durables: []string{"b", "c"}, Floor: 10}}, 4)
	for range 10 {
		rr.queues[2] <- nil
	}
	got := rr.round(func(jetstream.Msg) {})
	if got != 4 {
		t.Fatalf("round handed out %d, want the whole budget 4 to the lone batch durable", got)
	}
}
