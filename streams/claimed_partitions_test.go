package streams

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/natsmap"
	"github.com/toolgate/toolgate/internal/natsmap/embedded"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
)

func partitioned(p int) Settings {
	s := DefaultSettings()
	s.Storage = jetstream.MemoryStorage
	s.Fair.Partitions = p
	return s
}

// P = 1 is the layout of before: TOOLGATE_RESPONSES on the unsuffixed
// claimed subjects alone, no partition stream, no mapping, accumulate's
// durable on the one filter.
func TestResponsesPartitions_one_partition_changes_nothing(t *testing.T) {
	s := partitioned(1)
	var names []string
	for _, c := range s.StreamConfigs() {
		names = append(names, c.Name)
		if c.Name == StreamResponses && !slices.Equal(c.Subjects, []string{InClaimedAll()}) {
			t.Fatalf("TOOLGATE_RESPONSES' subjects at P = 1: %v", c.Subjects)
		}
	}
	if slices.Contains(names, ResponsesStream(1)) {
		t.Fatalf("a claimed partition stream at P = 1: %v", names)
	}
	if src, dest := ResponsesMapping(1); src != "" || dest != "" || natsmap.Conf(1) != "" {
		t.Fatalf("a mapping at P = 1: %q -> %q", src, dest)
	}
	st, _ := Lookup(Accumulate)
	for _, c := range s.LaneConsumers(st) {
		if c.Name == AccumulateClaimed && (c.Subject != InClaimedAll() || len(c.Subjects) > 0) {
			t.Fatalf("accumulate_r at P = 1: %q %v", c.Subject, c.Subjects)
		}
	}
}

// The mapping's destination is the one the design names, and the
// configuration block carries it.
func TestResponsesMapping_partitions_on_the_tenant_and_the_id(t *testing.T) {
	src, dest := ResponsesMapping(3)
	if src != "toolgate.in.t.*.response.*" || dest != "toolgate.in.t.{{wildcard(1)}}.response.{{wildcard(2)}}.{{partition(3,1,2)}}" {
		t.Fatalf("mapping: %q -> %q", src, dest)
	}
	if got := natsmap.Conf(3); !strings.HasPrefix(got, "mappings {\n  \"toolgate.in.t.*.response.*\": \"toolgate.in.t.{{wildcard(1)}}.response.{{wildcard(2)}}.{{partition(3,1,2)}}\"\n") {
		t.Fatalf("conf: %q", got)
	}
}

// With P = 3 applied and the server mapping P = 3, every claimed response
// is stored in the partition ResponsePartition names, on its subject with
// .<k>, and a second publish under the same id is refused there (the
// claim); the streams do not overlap TOOLGATE_IN (the server would refuse
// them).
func TestResponsesPartitions_the_server_stores_each_id_where_ResponsePartition_says(t *testing.T) {
	srv := testenv.RunJetStream(t)
	if err := embedded.Apply(srv, 3); err != nil {
		t.Fatal(err)
	}
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := Ensure(ctx, js, partitioned(3)); err != nil {
		t.Fatal(err)
	}
	names, err := AllResponsesStreams(ctx, js)
	if err != nil || !slices.Equal(names, []string{StreamResponses, ResponsesStream(1), ResponsesStream(2)}) {
		t.Fatalf("claimed streams: %v, %v", names, err)
	}
	counts := map[int]int{}
	for i := range 300 {
		tok, rid := "t"+strconv.Itoa(i%7), fmt.Sprintf("resp-%d", i)
		subj := InTenantClaimed(tok, rid)
		if _, err := js.Publish(ctx, subj, []byte("x")); err != nil {
			t.Fatalf("publish %s: %v", subj, err)
		}
		k := ResponsePartition(tok, rid, 3)
		counts[k]++
		str, err := js.Stream(ctx, ResponsesStream(k))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := str.GetLastMsgForSubject(ctx, wire.ClaimedPartitionSubject(subj, k)); err != nil {
			t.Fatalf("%s not in %s as partition %d: %v", subj, ResponsesStream(k), k, err)
		}
	}
	if len(counts) != 3 {
		t.Fatalf("partitions used: %v", counts)
	}
	_, err = js.Publish(ctx, InTenantClaimed("t0", "resp-0"), []byte("other"))
	if !claimedFull(err) {
		t.Fatalf("a second publish under a claimed id: %v", err)
	}
	for k := range 3 { // accumulate's claimed durable in each partition
		if _, err := js.Consumer(ctx, ResponsesStream(k), AccumulateClaimed); err != nil {
			t.Fatalf("accumulate_r in %s: %v", ResponsesStream(k), err)
		}
	}
}

func claimedFull(err error) bool {
	var ae *jetstream.APIError
	return err != nil && errors.As(err, &ae) && ae.ErrorCode == wire.ClaimedFullCode
}

// Raising P records the P before and when; applying the same P again
// keeps them; a new stream records no P before.
func TestEnsure_records_the_claimed_partitions_and_the_change(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	layout := func() ResponsesLayout {
		t.Helper()
		st, err := js.Stream(ctx, StreamResponses)
		if err != nil {
			t.Fatal(err)
		}
		return ReadResponsesLayout(st.CachedInfo().Config.Metadata)
	}
	if err := Ensure(ctx, js, partitioned(1)); err != nil {
		t.Fatal(err)
	}
	if l := layout(); l.Partitions != 1 || l.Previous != 0 || !l.Changed.IsZero() {
		t.Fatalf("new at P = 1: %+v", l)
	}
	before := time.Now()
	if err := Ensure(ctx, js, partitioned(3)); err != nil {
		t.Fatal(err)
	}
	raised := layout()
	if raised.Partitions != 3 || raised.Previous != 1 || raised.Changed.Before(before.Add(-time.Second)) || !raised.Migrating(time.Now(), time.Hour) {
		t.Fatalf("raised to 3: %+v", raised)
	}
	if err := Ensure(ctx, js, partitioned(3)); err != nil {
		t.Fatal(err)
	}
	if again := layout(); again != raised {
		t.Fatalf("applied again: %+v, was %+v", again, raised)
	}
	if raised.Migrating(raised.Changed.Add(2*time.Hour), time.Hour) {
		t.Fatal("still migrating after the claim period")
	}
}

func TestSplitClaimedPartition_takes_canonical_partitions_only(t *testing.T) {
	for subj, want := range map[string]string{
		"toolgate.in.t.acme.response.r1":     "toolgate.in.t.acme.response.r1 0 false true",
		"toolgate.in.t.acme.response.r1.0":   "toolgate.in.t.acme.response.r1 0 true true",
		"toolgate.in.t.acme.response.r1.63":  "toolgate.in.t.acme.response.r1 63 true true",
		"toolgate.in.t.acme.response.r1.64":  " 0 false false",
		"toolgate.in.t.acme.response.r1.01":  " 0 false false",
		"toolgate.in.t.acme.response.r1.-1":  " 0 false false",
		"toolgate.in.t.acme.response.r1.x":   " 0 false false",
		"toolgate.in.t.acme.response.r1.1.2": " 0 false false",
		"toolgate.in.t.acme.response":        " 0 false false",
		"toolgate.in.t.acme.batch":           " 0 false false",
	} {
		base, k, parted, ok := SplitClaimedPartition(subj)
		if got := fmt.Sprint(base, " ", k, " ", parted, " ", ok); got != want {
			t.Errorf("%s: %s, want %s", subj, got, want)
		}
	}
}
