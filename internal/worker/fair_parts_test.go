package worker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// With partitions a lane's durable is read in every partition stream, and
// its partitions count as one: a tenant whose calls are spread over two
// partitions gets the share of a tenant whose calls are in one, not twice
// it, and takes from its partitions in turn.
func TestRoundRobin_a_lane_spread_over_partitions_keeps_one_share(t *testing.T) {
	// Two shares, each one durable, two partitions: queues a/p0, a/p1,
	// b/p0, b/p1. a has a backlog in both partitions, b in partition 0.
	rr := newPartRoundRobin([]Share{{Durables: []string{"a"}}, {Durables: []string{"b"}}}, 4, 2)
	for range laneBuffer {
		rr.queues[0] <- tagged{lane: "a0"}
		rr.queues[1] <- tagged{lane: "a1"}
		rr.queues[2] <- tagged{lane: "b0"}
	}
	var order []string
	rr.round(func(m jetstream.Msg) { order = append(order, m.(tagged).lane) })
	joined := strings.Join(order, ",")
	a := strings.Count(joined, "a")
	b := strings.Count(joined, "b")
	if a != 4 || b != 4 {
		t.Fatalf("a round handed out a %d, b %d (%v): want 4 each, whatever the partitions", a, b, order)
	}
	if strings.Count(joined, "a0") != 2 || strings.Count(joined, "a1") != 2 {
		t.Fatalf("a's partitions did not take turns: %v", order)
	}
	// Priority holds across partitions: a batch input in partition 1 waits
	// for its floor while interactive ones wait in partition 0.
	rr = newPartRoundRobin([]Share{{Durables: []string{"i", "b"}, Floor: 25}}, 4, 2)
	for range laneBuffer {
		rr.queues[0] <- tagged{lane: "i0"}
		rr.queues[3] <- tagged{lane: "b1"}
	}
	order = nil
	rr.round(func(m jetstream.Msg) { order = append(order, m.(tagged).lane) })
	if fmt.Sprint(order) != "[i0 i0 i0 b1]" {
		t.Fatalf("handed out %v, want three interactive then the batch floor", order)
	}
}
