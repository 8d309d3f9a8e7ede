package streams

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// P = 1 (and 0, unset) is the layout without partitions, stream for
// stream: partitions cost nothing until they are asked for.
func TestPartitions_P1_is_the_layout_of_before(t *testing.T) {
	s := DefaultSettings()
	before := s.StreamConfigs()
	s.Fair.Partitions = 1
	if !reflect.DeepEqual(s.StreamConfigs(), before) {
		t.Fatal("P = 1 changed the streams")
	}
	for _, st := range Table() {
		if cs := s.PartitionConsumers(st, 0); len(cs) != 0 {
			t.Fatalf("%s has durables of partition 0 beyond its own: %v", st.Name, cs)
		}
	}
	if got := PartitionGateLane(Parse, "1i", 0); got != GateLane(Parse, "1i") {
		t.Fatalf("partition 0's lane subject %q, want %q", got, GateLane(Parse, "1i"))
	}
	if got := PartitionExecuteSubject("g", "0", 0); got != ExecuteSubject("g", "0") {
		t.Fatalf("partition 0's execute subject %q", got)
	}
}

// A call's partition depends on its tenant and response only (a
// response's calls share one), and P partitions all get calls.
func TestPartition_of_a_response_is_stable_and_spread(t *testing.T) {
	seen := map[int]int{}
	for i := range 400 {
		rid := fmt.Sprintf("resp-%d", i)
		p := Partition("acme", rid, 4)
		if p != Partition("acme", rid, 4) || p < 0 || p >= 4 {
			t.Fatalf("partition %d of %s", p, rid)
		}
		seen[p]++
	}
	for p := range 4 {
		if seen[p] < 50 {
			t.Fatalf("partition %d got %d of 400 responses: %v", p, seen[p], seen)
		}
	}
	if Partition("acme", "r", 1) != 0 || Partition("acme", "r", 0) != 0 {
		t.Fatal("one partition is partition 0")
	}
}

// The partition streams' subjects overlap no other stream's (the server
// refuses a stream whose subjects overlap another's), each partition has
// the stage's durables under the same names, and a scheduled retry of a
// call in a partition waits in that partition's stream.
func TestEnsure_applies_partitions_beside_every_stream(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := DefaultSettings()
	s.Fair = Fair{Lanes: 2, Partitions: 3}
	for range 2 {
		if err := Ensure(ctx, js, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, stage := range PartitionedStages() {
		ps, err := PartitionStreamsOf(ctx, js, stage)
		if err != nil || !reflect.DeepEqual(ps, []int{1, 2}) {
			t.Fatalf("%s's partition streams %v (%v), want 1 and 2", stage, ps, err)
		}
	}
	st, err := js.Stream(ctx, PartitionStream(Validate, 2))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ci := range st.ListConsumers(ctx).Info() {
		n++
		if ci.Name != Validate && ci.Config.FilterSubject != PartitionGateLane(Validate, ci.Name[len(Validate)+1:], 2) {
			t.Errorf("durable %s filters %q", ci.Name, ci.Config.FilterSubject)
		}
	}
	if n != 1+4 { // its main durable and 2 lanes x (interactive, batch)
		t.Fatalf("%d durables in %s, want 5", n, PartitionStream(Validate, 2))
	}
	// Each subject of a partition lands in its partition's stream, and
	// only there.
	for subj, want := range map[string]string{
		PartitionGate(Parse, 1):                                                 PartitionStream(Parse, 1),
		PartitionGateLane(Repair, "0b", 2):                                      PartitionStream(Repair, 2),
		PartitionExecuteSubject("example", "0", 1):                              PartitionStream(Execute, 1),
		ScheduleFor("example", PartitionExecuteSubject("example", "0", 2), "9"): PartitionStream(Execute, 2),
		ScheduleFor("example", ExecuteSubject("example", "0"), "9"):             StreamExecute,
		Gate(Parse):           StreamGates,
		GateLane(Parse, "0i"): LaneStream(Parse),
	} {
		ack, err := js.Publish(ctx, subj, []byte("hop"))
		if err != nil {
			t.Fatalf("%s: %v", subj, err)
		}
		if ack.Stream != want {
			t.Errorf("%s stored in %s, want %s", subj, ack.Stream, want)
		}
	}
}

// Lowering P leaves a partition stream that holds hops to drain; prune
// deletes those beyond P once empty, and none within P.
func TestPrune_deletes_only_empty_partition_streams_beyond_P(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := DefaultSettings()
	s.Fair.Partitions = 3
	if err := Ensure(ctx, js, s); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, PartitionGate(Parse, 2), []byte("waiting")); err != nil {
		t.Fatal(err)
	}
	s.Fair.Partitions = 2
	if err := Ensure(ctx, js, s); err != nil { // apply with the lowered P deletes nothing
		t.Fatal(err)
	}
	if _, err := js.Stream(ctx, PartitionStream(Parse, 2)); err != nil {
		t.Fatalf("apply deleted %s: %v", PartitionStream(Parse, 2), err)
	}
	deleted, kept, err := Prune(ctx, js, s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kept, []string{PartitionStream(Parse, 2)}) || len(deleted) != len(PartitionedStages())+1 { // and the empty TOOLGATE_RESULTS_2 and TOOLGATE_IN_2
		t.Fatalf("pruned %v, kept %v: want every partition 2 but parse's deleted", deleted, kept)
	}
	for _, stage := range PartitionedStages() {
		if _, err := js.Stream(ctx, PartitionStream(stage, 1)); err != nil {
			t.Fatalf("prune deleted %s within P: %v", PartitionStream(stage, 1), err)
		}
	}
	// Once the hop is taken, the next prune deletes it.
	c, err := js.Consumer(ctx, PartitionStream(Parse, 2), Parse)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.DoubleAck(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		deleted, _, err := Prune(ctx, js, s)
		if err != nil {
			return err
		}
		if len(deleted) != 1 {
			return fmt.Errorf("pruned %v", deleted)
		}
		return nil
	})
	if _, err := js.Stream(ctx, PartitionStream(Parse, 2)); err == nil {
		t.Fatal("the drained stream is still there")
	}
}
