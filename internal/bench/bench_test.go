package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestStats_percentiles(t *testing.T) {
	s := Stats{Count: 100, Elapsed: 2 * time.Second}
	for i := 1; i <= 100; i++ {
		s.Latencies = append(s.Latencies, time.Duration(i)*time.Millisecond)
	}
	if s.Rate() != 50 {
		t.Fatalf("rate %v, want 50", s.Rate())
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := s.Percentile(p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
}

func TestCeiling_every_message_crosses_every_hop_once(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	st, err := Ceiling(context.Background(), nc, js, 300, 1024, FileStorage(1), OneStream)
	if err != nil {
		t.Fatal(err)
	}
	if st.Count != 300 || len(st.Latencies) != 300 || st.Rate() <= 0 {
		t.Fatalf("ceiling stats %v", st)
	}
	// Once: no message arrived twice, and each was stored once per hop.
	if st.Duplicates != 0 {
		t.Fatalf("%d duplicate arrivals at the last hop", st.Duplicates)
	}
	if st.Stored != 300*Hops {
		t.Fatalf("%d messages stored, want %d (300 messages, %d hops)", st.Stored, 300*Hops, Hops)
	}
}

// The ceiling's traffic is known exactly, in either layout: each message is
// stored once per hop (Hops stores); its first publish and the publish ack,
// then for each of the Hops-1 workers a delivery, the ack, the next publish
// and its ack, and the delivery to the last hop's subscriber:
// 4*(Hops-1)+3 messages, plus the pull requests.
func TestTraffic_counts_the_ceilings_stores_and_messages(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	ctx := context.Background()
	for _, layout := range Layouts() {
		t0, err := ReadTraffic(ctx, Embedded{S: s}, js)
		if err != nil {
			t.Fatal(err)
		}
		const n = 200
		st, err := Ceiling(ctx, nc, js, n, 256, FileStorage(1), layout)
		if err != nil {
			t.Fatal(err)
		}
		t1, err := ReadTraffic(ctx, Embedded{S: s}, js)
		if err != nil {
			t.Fatal(err)
		}
		if t1.Stores != t0.Stores {
			t.Fatalf("%s: stores of a deleted stream counted: %d then %d", layout, t0.Stores, t1.Stores)
		}
		tr := t1.Since(t0)
		tr.Stores = st.Stored
		per := tr.Per(n)
		if per.Stores != Hops {
			t.Fatalf("%s: %v stores per message, want %d (one per hop)", layout, per.Stores, Hops)
		}
		if least := float64(4*(Hops-1) + 3); per.Messages < least || per.Messages > least+1 {
			t.Fatalf("%s: %v NATS messages per message through %d hops, want %v and a few pull requests", layout, per.Messages, Hops, least)
		}
	}
	if got := (Traffic{InMsgs: 5, ByStream: map[string]int64{"A": 1}}).Per(0); got.Messages != 0 || got.Stores != 0 || got.StoresBy != nil {
		t.Fatalf("per 0 calls = %v", got)
	}
}

// Stores are also told per stream, so the bench can say which write a
// change removed: a stream that stored nothing in between is left out.
func TestTraffic_tells_the_stores_of_each_stream(t *testing.T) {
	s := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, s)
	ctx := context.Background()
	for _, name := range []string{"A", "B"} {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name)}, Storage: jetstream.MemoryStorage}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.Publish(ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	t0, err := ReadTraffic(ctx, Embedded{S: s}, js)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := js.Publish(ctx, "a", nil); err != nil {
			t.Fatal(err)
		}
	}
	t1, err := ReadTraffic(ctx, Embedded{S: s}, js)
	if err != nil {
		t.Fatal(err)
	}
	per := t1.Since(t0).Per(2)
	if len(per.StoresBy) != 1 || per.StoresBy["A"] != 1.5 {
		t.Fatalf("stores per call by stream = %v, want A 1.5 alone", per.StoresBy)
	}
	if ex := (PerCall{StoresBy: map[string]float64{"A": 2, "KV_toolgate_exec_replay": 1.25}}).ExecutorStores(); ex != 1.25 {
		t.Fatalf("executors' stores = %v, want the replay bucket's 1.25", ex)
	}
	if ex := (PerCall{StoresBy: map[string]float64{"A": 2, "KV_toolgate_exec_replay": 0.5, "KV_toolgate_exec_replay_1": 0.25, "KV_toolgate_exec_replay_2": 0.5, "KV_toolgate_exec_replay_x": 9}}).ExecutorStores(); ex != 1.25 {
		t.Fatalf("executors' stores = %v, want the replay partitions' 1.25", ex)
	}
	if ex := per.ExecutorStores(); ex != 0 {
		t.Fatalf("executors' stores = %v with no executor, want 0", ex)
	}
	if got := FormatStoresBy(map[string]float64{"X": 0.4, "Y": 1, "W": 1}); got != "W 1.00, Y 1.00, X 0.40" {
		t.Fatalf("FormatStoresBy = %q", got)
	}
}
