package streams

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
)

// P = 1 keeps one results stream, TOOLGATE_RESULTS, and publishes a
// result where it always went; P = 3 adds TOOLGATE_RESULTS_1 and _2, each
// like TOOLGATE_RESULTS but for its name and subjects.
func TestStreamConfigs_partition_the_results_at_P3_only(t *testing.T) {
	s := DefaultSettings()
	count := func(cfgs []jetstream.StreamConfig) (n int) {
		for _, c := range cfgs {
			if c.Name == StreamResults || slices.Contains([]string{ResultsStream(1), ResultsStream(2)}, c.Name) {
				n++
			}
		}
		return n
	}
	if n := count(s.StreamConfigs()); n != 1 {
		t.Fatalf("P = 1: %d results streams", n)
	}
	if got := ResultsIn("acme", "r1", 1); got != wire.Results("acme", "r1") || got != "toolgate.results.acme.r1" {
		t.Fatalf("P = 1 publishes a result on %s", got)
	}
	s.Fair.Partitions = 3
	cfgs := s.StreamConfigs()
	var zero jetstream.StreamConfig
	for _, c := range cfgs {
		if c.Name == StreamResults {
			zero = c
		}
	}
	for p := 1; p < 3; p++ {
		i := slices.IndexFunc(cfgs, func(c jetstream.StreamConfig) bool { return c.Name == ResultsStream(p) })
		if i < 0 {
			t.Fatalf("P = 3 has no %s", ResultsStream(p))
		}
		want := zero
		want.Name, want.Subjects = ResultsStream(p), []string{"toolgate.results.*.*.p" + string(rune('0'+p))}
		if !reflect.DeepEqual(cfgs[i], want) {
			t.Errorf("%s: %+v, want %+v", ResultsStream(p), cfgs[i], want)
		}
	}
}

// With P = 3 a result of a response of partition k lands in
// TOOLGATE_RESULTS (k = 0) or TOOLGATE_RESULTS_<k>, and only there (the
// streams' subjects overlap no other stream's: the server refuses
// overlapping streams, and Ensure applies them beside every stream).
// ResultsStreams lists all three, and Prune deletes an empty one beyond a
// lowered P but keeps one that holds results.
func TestEnsure_stores_each_partitions_results_in_its_stream(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := DefaultSettings()
	s.Storage = jetstream.MemoryStorage
	s.Fair = Fair{Lanes: 2, Partitions: 3}
	for range 2 {
		if err := Ensure(ctx, js, s); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[int]bool{}
	for i := 0; len(seen) < 3 && i < 1000; i++ {
		rid := "r" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		p := Partition("acme", rid, 3)
		if seen[p] {
			continue
		}
		seen[p] = true
		ack, err := js.Publish(ctx, ResultsIn("acme", rid, 3), []byte("result"))
		if err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
		if ack.Stream != ResultsStream(p) {
			t.Errorf("a result of partition %d stored in %s, want %s", p, ack.Stream, ResultsStream(p))
		}
	}
	refs, err := ResultsStreams(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if want := []ResultsStreamRef{{0, StreamResults}, {1, ResultsStream(1)}, {2, ResultsStream(2)}}; !reflect.DeepEqual(refs, want) {
		t.Fatalf("results streams %v, want %v", refs, want)
	}
	// Lowered to P = 1: partition 1 and 2 hold a result each, kept.
	s.Fair.Partitions = 1
	_, kept, err := Prune(ctx, js, s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kept, ResultsStream(1)) || !slices.Contains(kept, ResultsStream(2)) {
		t.Fatalf("prune kept %v: want the results streams that hold results", kept)
	}
	two, err := js.Stream(ctx, ResultsStream(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := two.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	deleted, _, err := Prune(ctx, js, s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(deleted, ResultsStream(2)) || slices.Contains(deleted, ResultsStream(1)) {
		t.Fatalf("prune deleted %v: want %s and not %s", deleted, ResultsStream(2), ResultsStream(1))
	}
}

// A deployment of before (TOOLGATE_RESULTS on toolgate.results.>, results
// stored) is narrowed in place to toolgate.results.*.*, its results kept,
// and P = 3's results streams are made beside it.
func TestEnsure_narrows_the_results_stream_of_before_in_place(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := DefaultSettings()
	s.Storage = jetstream.MemoryStorage
	var old jetstream.StreamConfig
	for _, c := range s.StreamConfigs() {
		if c.Name == StreamResults {
			old = c
		}
	}
	old.Subjects = []string{"toolgate.results.>"}
	if _, err := js.CreateStream(ctx, old); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{Results("acme", "r1"), Results("", "r2")} {
		if _, err := js.Publish(ctx, subj, []byte("before")); err != nil {
			t.Fatal(err)
		}
	}
	s.Fair.Partitions = 3
	if err := Ensure(ctx, js, s); err != nil {
		t.Fatalf("apply over the results stream of before: %v", err)
	}
	st, err := js.Stream(ctx, StreamResults)
	if err != nil {
		t.Fatal(err)
	}
	info := st.CachedInfo()
	if info.State.Msgs != 2 || !slices.Equal(info.Config.Subjects, ResultsSubjects(0)) {
		t.Fatalf("TOOLGATE_RESULTS after the apply: %d messages, subjects %v", info.State.Msgs, info.Config.Subjects)
	}
	ack, err := js.Publish(ctx, wire.ResultsPartition("acme", "r3", 2), []byte("after"))
	if err != nil || ack.Stream != ResultsStream(2) {
		t.Fatalf("a partition 2 result after the upgrade: %v, %v", ack, err)
	}
}
