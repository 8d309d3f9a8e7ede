package streams

import (
	"context"
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

// P = 1 is TOOLGATE_IN of before: its own subjects, no partition stream,
// no mapping, accumulate's durables on the same filters.
func TestInPartitions_one_partition_changes_nothing(t *testing.T) {
	s := partitioned(1)
	for _, c := range s.StreamConfigs() {
		if c.Name == StreamIn && !slices.Equal(c.Subjects, InSubjects()) {
			t.Fatalf("TOOLGATE_IN's subjects at P = 1: %v", c.Subjects)
		}
		if IsInPartitionStream(c.Name) {
			t.Fatalf("a partition stream of TOOLGATE_IN at P = 1: %s", c.Name)
		}
	}
	if ms := wire.Mappings(1); len(ms) != 0 {
		t.Fatalf("mappings at P = 1: %v", ms)
	}
	st, _ := Lookup(Accumulate)
	s.Fair.Tenants = []string{"acme"}
	for _, c := range s.StageConsumers(st) {
		for _, f := range append([]string{c.Subject}, c.Subjects...) {
			if _, _, parted, _ := SplitInPartition(f); parted {
				t.Fatalf("%s filters on a partition at P = 1: %v", c.Name, c.Subjects)
			}
		}
	}
	if cs := s.PartitionConsumers(st, 0); len(cs) != 0 {
		t.Fatalf("durables in partition 0's own stream: %v", cs)
	}
}

// The mappings the design names, all four in the configuration block.
func TestMappings_partition_streams_by_id_and_batches_by_tenant(t *testing.T) {
	want := []wire.Mapping{
		{Src: "toolgate.in.t.*.response.*", Dest: "toolgate.in.t.{{wildcard(1)}}.response.{{wildcard(2)}}.{{partition(3,1,2)}}"},
		{Src: "toolgate.in.t.*.stream.*", Dest: "toolgate.in.t.{{wildcard(1)}}.stream.{{wildcard(2)}}.{{partition(3,1,2)}}"},
		{Src: "toolgate.in.stream.*", Dest: "toolgate.in.stream.{{wildcard(1)}}.{{partition(3,1)}}"},
		{Src: "toolgate.in.t.*.batch", Dest: "toolgate.in.t.{{wildcard(1)}}.batch.{{partition(3,1)}}"},
	}
	if got := wire.Mappings(3); !slices.Equal(got, want) {
		t.Fatalf("mappings %v", got)
	}
	conf := natsmap.Conf(3)
	for _, m := range want {
		if line := strconv.Quote(m.Src) + ": " + strconv.Quote(m.Dest); !strings.Contains(conf, line) {
			t.Fatalf("conf lacks %s:\n%s", line, conf)
		}
	}
}

// With P = 3 applied and mapped, the server stores a tenant's stream
// events where ResponsePartition (the claim's hash) says, the shared
// streams' where it says of the id alone, a tenant's batch responses where
// BatchPartition says; the whole-response subjects that are not mapped
// stay in TOOLGATE_IN; and accumulate's durables are in every partition.
func TestInPartitions_the_server_stores_each_input_where_the_mirror_says(t *testing.T) {
	srv := testenv.RunJetStream(t)
	if err := embedded.Apply(srv, 3); err != nil {
		t.Fatal(err)
	}
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := partitioned(3)
	s.Fair.Tenants = []string{"t0", "t1"}
	if err := Ensure(ctx, js, s); err != nil {
		t.Fatal(err)
	}
	names, err := AllInStreams(ctx, js)
	if err != nil || !slices.Equal(names, []string{StreamIn, InputStream(1), InputStream(2)}) {
		t.Fatalf("input streams: %v, %v", names, err)
	}
	stored := func(subj string, at Place) {
		t.Helper()
		ack, err := js.Publish(ctx, subj, []byte("x"))
		if err != nil {
			t.Fatalf("publish %s: %v", subj, err)
		}
		stream, as := InPlaceSubject(subj, at)
		if ack.Stream != stream {
			t.Fatalf("%s stored in %s, want %s", subj, ack.Stream, stream)
		}
		m, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := m.GetMsg(ctx, ack.Sequence); err != nil || got.Subject != as {
			t.Fatalf("%s stored as %v (%v), want %s", subj, got, err, as)
		}
	}
	counts := map[string]map[int]int{"tenant": {}, "shared": {}, "batch": {}}
	for i := range 300 {
		tok, rid := "t"+strconv.Itoa(i%7), fmt.Sprintf("resp-%d", i)
		k := ResponsePartition(tok, rid, 3)
		counts["tenant"][k]++
		stored(wire.InTenantStream(tok, rid), Place{K: k})
		k = ResponsePartition("", rid, 3)
		counts["shared"][k]++
		stored(InStream(rid), Place{K: k})
		if i < 60 {
			tok = "tenant-" + strconv.Itoa(i)
			k = BatchPartition(tok, 3)
			counts["batch"][k]++
			stored(wire.InTenantBatch(tok), Place{K: k})
		}
	}
	for kind, c := range counts {
		if len(c) != 3 {
			t.Fatalf("%s: partitions used %v", kind, c)
		}
	}
	for _, subj := range []string{SubjectInResponse, wire.InTenantResponse("t0"), wire.InAsResponse("gw")} {
		stored(subj, Place{Unsuffixed: true})
	}
	st, _ := Lookup(Accumulate)
	for k := 1; k < 3; k++ {
		for _, c := range s.PartitionConsumers(st, k) {
			if _, err := js.Consumer(ctx, c.Stream, c.Name); err != nil {
				t.Fatalf("%s in %s: %v", c.Name, c.Stream, err)
			}
		}
		for _, d := range []string{Accumulate, AccumulateLane(s.Fair.LaneIndex("t0")), AccumulateBatchLane(s.Fair.LaneIndex("t0"))} {
			if _, err := js.Consumer(ctx, InputStream(k), d); err != nil {
				t.Fatalf("%s in %s: %v", d, InputStream(k), err)
			}
		}
	}
}

// TOOLGATE_IN of before took toolgate.in.stream.> and
// toolgate.in.t.*.stream.>; applying P = 3 narrows it in place to one
// token, keeping what it stored, so the partitions' subjects are not its.
func TestEnsure_narrows_the_input_stream_of_before_in_place(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := partitioned(1)
	var old jetstream.StreamConfig
	for _, c := range s.StreamConfigs() {
		if c.Name == StreamIn {
			old = c
		}
	}
	old.Subjects = []string{SubjectInResponse, subjectInStream + ">", wire.InAsPrefix + "*.response", wire.InTenantPrefix + "*.*", wire.InTenantPrefix + "*.stream.>"}
	if _, err := js.CreateStream(ctx, old); err != nil {
		t.Fatal(err)
	}
	before := []string{InStream("r1"), wire.InTenantStream("acme", "r2"), wire.InTenantBatch("acme")}
	for _, subj := range before {
		if _, err := js.Publish(ctx, subj, []byte("before")); err != nil {
			t.Fatal(err)
		}
	}
	if err := Ensure(ctx, js, partitioned(3)); err != nil {
		t.Fatalf("apply over the input stream of before: %v", err)
	}
	in, err := js.Stream(ctx, StreamIn)
	if err != nil {
		t.Fatal(err)
	}
	if info := in.CachedInfo(); info.State.Msgs != 3 || slices.Contains(info.Config.Subjects, subjectInStream+">") {
		t.Fatalf("TOOLGATE_IN after the apply: %d messages, subjects %v", info.State.Msgs, info.Config.Subjects)
	}
	for _, subj := range before {
		if _, err := in.GetLastMsgForSubject(ctx, subj); err != nil {
			t.Fatalf("%s stored before the upgrade: %v", subj, err)
		}
	}
	ack, err := js.Publish(ctx, InStream("r3")+".2", []byte("after"))
	if err != nil || ack.Stream != InputStream(2) {
		t.Fatalf("a partition 2 event after the upgrade: %v, %v", ack, err)
	}
}

// Lowering P: --prune deletes an empty partition stream beyond P and keeps
// one that still holds input.
func TestPrune_deletes_an_empty_input_partition_only(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Ensure(ctx, js, partitioned(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, InStream("r1")+".1", []byte("waiting")); err != nil {
		t.Fatal(err)
	}
	if err := Ensure(ctx, js, partitioned(1)); err != nil {
		t.Fatalf("apply P = 1 beside the partitions of P = 3: %v", err)
	}
	deleted, kept, err := Prune(ctx, js, partitioned(1))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(deleted, InputStream(2)) || !slices.Contains(kept, InputStream(1)) || slices.Contains(deleted, InputStream(1)) {
		t.Fatalf("pruned %v, kept %v", deleted, kept)
	}
	names, err := AllInStreams(ctx, js)
	if err != nil || !slices.Equal(names, []string{StreamIn, InputStream(1)}) {
		t.Fatalf("input streams after the prune: %v, %v", names, err)
	}
}

func TestSplitInPartition_takes_canonical_partitions_only(t *testing.T) {
	for subj, want := range map[string]string{
		"toolgate.in.stream.r1":                "toolgate.in.stream.r1 0 false true",
		"toolgate.in.stream.r1.2":              "toolgate.in.stream.r1 2 true true",
		"toolgate.in.stream.r1.64":             " 0 false false",
		"toolgate.in.stream.r1.01":             " 0 false false",
		"toolgate.in.stream.r1.2.3":            " 0 false false",
		"toolgate.in.t.acme.stream.r1":         "toolgate.in.t.acme.stream.r1 0 false true",
		"toolgate.in.t.acme.stream.r1.0":       "toolgate.in.t.acme.stream.r1 0 true true",
		"toolgate.in.t.acme.stream.r1.63":      "toolgate.in.t.acme.stream.r1 63 true true",
		"toolgate.in.t.acme.stream.r1.x":       " 0 false false",
		"toolgate.in.t.acme.batch":             "toolgate.in.t.acme.batch 0 false true",
		"toolgate.in.t.acme.batch.1":           "toolgate.in.t.acme.batch 1 true true",
		"toolgate.in.t.acme.batch.-1":          " 0 false false",
		"toolgate.in.t.acme.batch.stream.r1":   " 0 false false",
		"toolgate.in.t.acme.response":          " 0 false false",
		"toolgate.in.t.acme.response.r1.1":     " 0 false false",
		"toolgate.in.response":                 " 0 false false",
		"toolgate.in.t.acme.batchx":            " 0 false false",
		"toolgate.in.t.acme.stream.r1.1.extra": " 0 false false",
	} {
		base, k, parted, ok := SplitInPartition(subj)
		if got := fmt.Sprint(base, " ", k, " ", parted, " ", ok); got != want {
			t.Errorf("%s: %s, want %s", subj, got, want)
		}
	}
}

// TOOLGATE_IN's partitions are placed like a stage's: each on another node.
func TestLeaderPlan_places_the_input_partitions_each_on_another_node(t *testing.T) {
	info := func(name string) *jetstream.StreamInfo {
		return &jetstream.StreamInfo{Config: jetstream.StreamConfig{Name: name, Replicas: 3},
			Cluster: &jetstream.ClusterInfo{Leader: "a", Replicas: []*jetstream.PeerInfo{{Name: "b"}, {Name: "c"}}}}
	}
	infos := map[string]*jetstream.StreamInfo{}
	for _, name := range []string{StreamGates, StreamIn, InputStream(1), InputStream(2), StreamResults, StreamResponses} {
		infos[name] = info(name)
	}
	infos[StreamResponses].State.LastSeq, infos[StreamResults].State.LastSeq = 5000, 5000
	for k := range 3 {
		infos[InputStream(k)].State.LastSeq = 100
	}
	for _, stage := range PartitionedStages() {
		infos[PartitionStream(stage, 0)] = info(PartitionStream(stage, 0))
	}
	gates, stages, others, err := groupLeaderStreams(context.Background(), nil, infos)
	if err != nil {
		t.Fatal(err)
	}
	want := leaderPlan(gates, stages, others)
	led := map[string]bool{}
	for k := range 3 {
		led[want[InputStream(k)]] = true
	}
	if len(led) != 3 {
		t.Fatalf("the input partitions are led by %v, want three nodes (plan %v)", led, want)
	}
}

// Lowering P to 1: for the claim period after, TOOLGATE_IN and
// TOOLGATE_RESPONSES keep partition 0's suffixed subjects and accumulate's
// durables their filters, so what the P before stored there is still
// delivered (dropped, it would wait unread).
func TestEnsure_lowering_P_keeps_partition_zeros_input_read(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Ensure(ctx, js, partitioned(3)); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{wire.InTenantBatch("acme") + ".0", wire.ClaimedPartitionSubject(InTenantClaimed("acme", "r1"), 0)} {
		if _, err := js.Publish(ctx, subj, []byte("stored at P = 3")); err != nil {
			t.Fatalf("%s: %v", subj, err)
		}
	}
	if err := Ensure(ctx, js, partitioned(1)); err != nil {
		t.Fatal(err)
	}
	for stream, durable := range map[string]string{StreamIn: Accumulate, StreamResponses: AccumulateClaimed} {
		c, err := js.Consumer(ctx, stream, durable)
		if err != nil {
			t.Fatal(err)
		}
		if ci := c.CachedInfo(); ci.NumPending != 1 {
			t.Fatalf("%s of %s after lowering P: %d pending (filters %v), want the input partition 0 stored", durable, stream, ci.NumPending, ci.Config.FilterSubjects)
		}
	}
}

// The lanes' starts in TOOLGATE_IN's partitions are read from the server
// (each partition stream's own sequences): a listed tenant's stream event
// and batch response stored in partition 1 are its lanes', not the main
// durable's.
func TestReadAccumulateOwner_reads_the_lanes_starts_in_each_input_partition(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := partitioned(3)
	s.Fair.Tenants = []string{"acme"}
	if err := Ensure(ctx, js, s); err != nil {
		t.Fatal(err)
	}
	idx := s.Fair.LaneIndex("acme")
	o, err := ReadAccumulateOwner(ctx, js, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		durable, subject string
		skip             bool
	}{
		{Accumulate, wire.InTenantStream("acme", "r1") + ".1", true},
		{AccumulateLane(idx), wire.InTenantStream("acme", "r1") + ".1", false},
		{Accumulate, wire.InTenantBatch("acme") + ".1", true},
		{AccumulateBatchLane(idx), wire.InTenantBatch("acme") + ".1", false},
		{Accumulate, wire.InTenantStream("stranger", "r1") + ".1", false},
	} {
		if got := o.Skip(c.durable, c.subject, 1); got != c.skip {
			t.Errorf("Skip(%s, %s, 1) = %v, want %v", c.durable, c.subject, got, c.skip)
		}
	}
}
