package worker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// keyOf is the part of "key.n" before the dot.
func keyOf(m Msg) string { k, _, _ := strings.Cut(string(m.Data), "."); return k }

// A handler that waits on the network for one key must not hold up the
// others: with Key set, the input of key "a" waits until an input of key
// "b" has been handled — one queue for every goroutine would still work,
// but a single lane per stage (the accumulate default before) would not.
func TestWorker_keyed_inputs_of_other_keys_are_handled_while_one_waits(t *testing.T) {
	r := newRig(t, 30*time.Second, 5)
	bDone := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var order []string
	start(t, r, Config{Concurrency: 4, Key: keyOf}, func(ctx context.Context, m Msg) ([]Output, error) {
		switch keyOf(m) {
		case "a":
			select {
			case <-bDone:
			case <-time.After(10 * time.Second):
				return nil, Permanent("stuck", fmt.Errorf("key a waited for key b in vain"))
			}
		case "b":
			once.Do(func() { close(bDone) })
		}
		mu.Lock()
		order = append(order, string(m.Data))
		mu.Unlock()
		return echo(ctx, m)
	})
	r.publish(t, "in.x", "a.1")
	r.publish(t, "in.x", "b.1")
	testenv.Eventually(t, 15*time.Second, 20*time.Millisecond, r.consumerIdle("stage"))
	if n := r.count(t, "OUT", "dlq.>"); n != 0 {
		t.Fatalf("%d dead letters: key a was held up by its own lane", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(order, " ") != "b.1 a.1" {
		t.Fatalf("handled %v, want b.1 before a.1", order)
	}
}

// The inputs of one key are handled one at a time, in delivery order, however
// many goroutines the stage has (a stream's events reach accumulate in order).
func TestWorker_keyed_inputs_of_one_key_keep_their_order(t *testing.T) {
	r := newRig(t, 30*time.Second, 5)
	var mu sync.Mutex
	seen := map[string][]int{}
	busy := map[string]bool{}
	overlap := false
	start(t, r, Config{Concurrency: 8, Key: keyOf}, func(ctx context.Context, m Msg) ([]Output, error) {
		k := keyOf(m)
		var n int
		fmt.Sscanf(strings.TrimPrefix(string(m.Data), k+"."), "%d", &n)
		mu.Lock()
		if busy[k] {
			overlap = true
		}
		busy[k] = true
		mu.Unlock()
		time.Sleep(time.Duration(n%3) * time.Millisecond)
		mu.Lock()
		busy[k] = false
		seen[k] = append(seen[k], n)
		mu.Unlock()
		return echo(ctx, m)
	})
	const each = 30
	for i := range each {
		for _, k := range []string{"a", "b", "c"} {
			r.publish(t, "in.x", fmt.Sprintf("%s.%d", k, i))
		}
	}
	testenv.Eventually(t, 20*time.Second, 20*time.Millisecond, r.consumerIdle("stage"))
	mu.Lock()
	defer mu.Unlock()
	if overlap {
		t.Fatal("two inputs of one key were handled at the same time")
	}
	for _, k := range []string{"a", "b", "c"} {
		got := seen[k]
		if len(got) != each {
			t.Fatalf("key %s: handled %d inputs, want %d", k, len(got), each)
		}
		for i, n := range got {
			if n != i {
				t.Fatalf("key %s handled out of order: %v", k, got)
			}
		}
	}
}
