package streams

import (
	"slices"
	"testing"
)

// Accumulate's lanes: two durables per lane index that carries a listed
// tenant, the interactive one filtering on those tenants' whole-response
// and stream subjects, the batch one on their batch subjects, read as one
// lane group with the batch floor; lane-less without a list.
func TestAccumulateLanes_filter_on_the_listed_tenants(t *testing.T) {
	acc, _ := Lookup(Accumulate)
	// Without a tenant list: its main durable on TOOLGATE_RESPONSES only.
	if got := (DefaultSettings()).LaneConsumers(acc); len(got) != 1 || got[0].Name != AccumulateClaimed || got[0].Stream != StreamResponses || got[0].Subject != InClaimedAll() {
		t.Fatalf("lanes without a tenant list: %+v", got)
	}
	if g := (DefaultSettings()).LaneGroups(acc); len(g) != 1 || !slices.Equal(g[0].Durables, []string{Accumulate, AccumulateClaimed}) || !slices.Equal(g[0].Streams, []string{StreamIn, StreamResponses}) {
		t.Fatalf("groups without a tenant list: %+v", g)
	}
	s := DefaultSettings()
	s.Fair = Fair{Lanes: 2, Tenants: []string{"a", "b", "c"}, Weights: map[string]int{"b": 3}}
	all := s.LaneConsumers(acc)
	if len(all) != 7 || all[0].Name != AccumulateClaimed || all[3].Name != "accumulate_0r" || all[3].Stream != StreamResponses ||
		!slices.Equal(all[3].Subjects, []string{"toolgate.in.t.a.response.*", "toolgate.in.t.c.response.*"}) || !all[3].FromNow {
		t.Fatalf("accumulate claimed durables %+v", all)
	}
	cs := []Consumer{all[1], all[2], all[4], all[5]}
	if cs[0].Name != "accumulate_0" || !slices.Equal(cs[0].Subjects, []string{"toolgate.in.t.a.response", "toolgate.in.t.a.stream.>", "toolgate.in.t.c.response", "toolgate.in.t.c.stream.>"}) ||
		cs[1].Name != "accumulate_0b" || !slices.Equal(cs[1].Subjects, []string{"toolgate.in.t.a.batch", "toolgate.in.t.c.batch"}) ||
		cs[2].Name != "accumulate_1" || !slices.Equal(cs[2].Subjects, []string{"toolgate.in.t.b.response", "toolgate.in.t.b.stream.>"}) ||
		cs[3].Name != "accumulate_1b" || !slices.Equal(cs[3].Subjects, []string{"toolgate.in.t.b.batch"}) || !cs[0].FromNow || !cs[1].FromNow {
		t.Fatalf("accumulate lanes %+v", cs)
	}
	g := s.LaneGroups(acc)
	if len(g) != 3 || !slices.Equal(g[0].Durables, []string{Accumulate, AccumulateClaimed}) || g[2].Weight != 3 ||
		!slices.Equal(g[1].Durables, []string{"accumulate_0", "accumulate_0r", "accumulate_0b"}) || g[1].Floor != s.Fair.Floor() ||
		!slices.Equal(g[1].Streams, []string{StreamIn, StreamResponses, StreamIn}) {
		t.Fatalf("accumulate lane groups %+v", g)
	}
	if cfg := s.Config(cs[0]); cfg.FilterSubject != "" || len(cfg.FilterSubjects) != 4 {
		t.Fatalf("config %+v", cfg)
	}
	if d := Durables(Accumulate, 2); !slices.Equal(d, []string{Accumulate, AccumulateClaimed, "accumulate_0", "accumulate_0b", "accumulate_0r", "accumulate_1", "accumulate_1b", "accumulate_1r"}) {
		t.Fatalf("durables %v", d)
	}
}

// The main durable leaves a lane what the lane owns, from the sequence it
// started owning it; the lane leaves the main durable what came before.
func TestAccumulateOwner_each_input_has_one_owner(t *testing.T) {
	o := &AccumulateOwner{lane: map[string]string{"a": "accumulate_0"}, from: map[int]map[string]uint64{0: {"a": 10}, 1: {"a": 4}},
		batch: map[string]string{"a": "accumulate_0b"}, bfrom: map[int]map[string]uint64{0: {"a": 20}, 1: {"a": 6}},
		claimed: map[string]string{"a": "accumulate_0r"}, cfrom: map[int]map[string]uint64{0: {"a": 5}, 2: {"a": 3}}}
	for _, c := range []struct {
		durable, subject string
		seq              uint64
		skip             bool
	}{
		{Accumulate, "toolgate.in.t.a.response", 10, true},
		{"accumulate_0", "toolgate.in.t.a.response", 10, false},
		{Accumulate, "toolgate.in.t.a.stream.r1", 9, false},
		{"accumulate_0", "toolgate.in.t.a.stream.r1", 9, true},
		{Accumulate, "toolgate.in.t.z.response", 50, false}, // not listed
		{Accumulate, "toolgate.in.response", 50, false},     // the shared subject
		// .batch: the batch lane's from its own start, the main
		// durable's before it (stored before the batch durable existed,
		// though after the interactive lane's start), never the
		// interactive lane's (it read .> before the batch durables).
		{Accumulate, "toolgate.in.t.a.batch", 20, true},
		{"accumulate_0b", "toolgate.in.t.a.batch", 20, false},
		{"accumulate_0", "toolgate.in.t.a.batch", 20, true},
		{Accumulate, "toolgate.in.t.a.batch", 15, false},
		{"accumulate_0b", "toolgate.in.t.a.batch", 15, true},
		{"accumulate_0", "toolgate.in.t.a.batch", 15, true},
		{Accumulate, "toolgate.in.t.a.response", 15, true}, // the interactive lane's from 10
		// No ingest subject: the main durable's to refuse, whatever its seq.
		{Accumulate, "toolgate.in.t.a.junk", 50, false},
		{"accumulate_0", "toolgate.in.t.a.junk", 50, true},
		{Accumulate, "toolgate.in.t.a.batch.stream.r1", 50, false},
		{"accumulate_0b", "toolgate.in.t.a.batch.stream.r1", 50, true},
		// The claimed subjects, in TOOLGATE_RESPONSES (its own
		// sequences): the claimed lane's from its start, the claimed
		// main durable's before it and for a tenant not listed.
		{AccumulateClaimed, "toolgate.in.t.a.response.r1", 5, true},
		{"accumulate_0r", "toolgate.in.t.a.response.r1", 5, false},
		{AccumulateClaimed, "toolgate.in.t.a.response.r1", 4, false},
		{"accumulate_0r", "toolgate.in.t.a.response.r1", 4, true},
		{AccumulateClaimed, "toolgate.in.t.z.response.r1", 50, false},
		// Partitions: each from its own start, in its own sequences
		// (partition 0's .0 as TOOLGATE_RESPONSES'); a partition whose
		// lanes were not read is its main durable's.
		{AccumulateClaimed, "toolgate.in.t.a.response.r1.0", 5, true},
		{"accumulate_0r", "toolgate.in.t.a.response.r1.0", 4, true},
		{AccumulateClaimed, "toolgate.in.t.a.response.r1.2", 3, true},
		{"accumulate_0r", "toolgate.in.t.a.response.r1.2", 3, false},
		{AccumulateClaimed, "toolgate.in.t.a.response.r1.2", 2, false},
		{"accumulate_0r", "toolgate.in.t.a.response.r1.2", 2, true},
		{AccumulateClaimed, "toolgate.in.t.a.response.r1.1", 50, false},
		{"accumulate_0r", "toolgate.in.t.a.response.r1.1", 50, true},
		// TOOLGATE_IN's partitions (in_partitions.go): a stream's events
		// and batch responses with .<k>, each lane from its start in
		// partition k's sequences; partition 0's .0 as TOOLGATE_IN's; a
		// partition whose lanes were not read (2) is the main durable's.
		{Accumulate, "toolgate.in.t.a.stream.r1.1", 4, true},
		{"accumulate_0", "toolgate.in.t.a.stream.r1.1", 4, false},
		{Accumulate, "toolgate.in.t.a.stream.r1.1", 3, false},
		{"accumulate_0", "toolgate.in.t.a.stream.r1.1", 3, true},
		{Accumulate, "toolgate.in.t.a.stream.r1.0", 10, true},
		{Accumulate, "toolgate.in.t.a.stream.r1.0", 9, false},
		{Accumulate, "toolgate.in.t.a.batch.1", 6, true},
		{"accumulate_0b", "toolgate.in.t.a.batch.1", 6, false},
		{"accumulate_0", "toolgate.in.t.a.batch.1", 6, true},
		{Accumulate, "toolgate.in.t.a.batch.1", 5, false},
		{Accumulate, "toolgate.in.t.a.batch.0", 20, true},
		{Accumulate, "toolgate.in.t.a.stream.r1.2", 50, false},
		{"accumulate_0", "toolgate.in.t.a.stream.r1.2", 50, true},
		{Accumulate, "toolgate.in.t.a.batch.2", 50, false},
		{"accumulate_0b", "toolgate.in.t.a.batch.2", 50, true},
	} {
		if got := o.Skip(c.durable, c.subject, c.seq); got != c.skip {
			t.Errorf("Skip(%s, %s, %d) = %v, want %v", c.durable, c.subject, c.seq, got, c.skip)
		}
	}
	if (*AccumulateOwner)(nil).Skip(Accumulate, "toolgate.in.t.a.response", 1) {
		t.Error("no lanes: the main durable skipped an input")
	}
}

// With lanes, an executor group's durables filter on disjoint subjects (a
// work queue needs it): its own on lane 0, one per lane token; the names
// of two groups' durables never meet.
func TestExecuteGroupConsumers_with_lanes_are_disjoint(t *testing.T) {
	s := DefaultSettings()
	s.Fair = Fair{Tenants: []string{"a"}}
	cs := s.ExecuteGroupConsumers("billing", 4)
	if len(cs) != 1+2*DefaultLanes || cs[0].Name != "execute_g_billing" || cs[0].Subject != "toolgate.gate.execute.g.billing.0" {
		t.Fatalf("group durables %+v", cs[:1])
	}
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c.Subject] || c.MaxAckPending != 4 {
			t.Errorf("durable %s: filter %s (twice: %v), MaxAckPending %d", c.Name, c.Subject, seen[c.Subject], c.MaxAckPending)
		}
		seen[c.Subject] = true
	}
	if cs[1].Name != "execute_g_billing~0i" || cs[1].Subject != ExecuteSubject("billing", "0i") {
		t.Errorf("lane durable %+v", cs[1])
	}
	if g, lane, ok := SplitExecuteLaneDurable(cs[2].Name); !ok || g != "billing" || lane != "0b" {
		t.Errorf("SplitExecuteLaneDurable(%s) = %s %s %v", cs[2].Name, g, lane, ok)
	}
	if _, _, ok := SplitExecuteLaneDurable("execute_g_billing_0i"); ok {
		t.Error("a group's own durable read as a lane")
	}
	if l := s.ExecuteGroupLanes("billing"); len(l) != 1+DefaultLanes || l[1].Durables[0] != "execute_g_billing~0i" {
		t.Errorf("group lanes %+v", l)
	}
}
