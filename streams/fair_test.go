package streams

import (
	"slices"
	"testing"
)

func TestLaneOf_listed_tenants_get_distinct_lanes_others_a_hash(t *testing.T) {
	f := Fair{Lanes: 4, Tenants: []string{"a", "b", "c", "d", "e"}, Priority: map[string]string{"c": PriorityBatch}}
	for _, c := range []struct{ tenant, prio, want string }{
		{"a", "", "0i"}, {"b", PriorityBatch, "1b"}, {"c", "", "2b"}, {"c", PriorityInteractive, "2i"},
		{"c", "bogus", "2b"}, {"d", "", "3i"}, {"e", "", "0i"}, // the fifth wraps onto lane 0
	} {
		if got := LaneOf(c.tenant, c.prio, f); got != c.want {
			t.Errorf("LaneOf(%q, %q) = %s, want %s", c.tenant, c.prio, got, c.want)
		}
		if got := f.LaneFunc()(c.tenant, c.prio); got != c.want {
			t.Errorf("LaneFunc(%q, %q) = %s, want %s", c.tenant, c.prio, got, c.want)
		}
	}
	// Automatic lanes without a tenant list: none, every hop lane-less.
	if (Fair{}).LaneCount() != 0 || (Fair{}).LaneFunc() != nil || (Fair{Tenants: []string{"a"}}).LaneCount() != DefaultLanes {
		t.Errorf("automatic lanes: %d without a list, %d with one", (Fair{}).LaneCount(), (Fair{Tenants: []string{"a"}}).LaneCount())
	}
	// Unlisted: fnv32a mod L, stable, and in range.
	g := Fair{Lanes: DefaultLanes}
	if got, want := LaneOf("acme", "", g), LaneToken(int(fnv32a("acme")%DefaultLanes), false); got != want {
		t.Errorf("unlisted acme = %s, want %s", got, want)
	}
	for _, tenant := range []string{"", "x", "acme", "~abc"} {
		if LaneOf(tenant, "", g) != g.LaneFunc()(tenant, "") {
			t.Errorf("LaneOf and LaneFunc disagree on %q", tenant)
		}
	}
}

func TestLaneWeight_sums_the_named_tenants_of_a_lane(t *testing.T) {
	f := Fair{Lanes: 2, Tenants: []string{"a", "b", "c"}, Weights: map[string]int{"a": 5}}
	if w := f.LaneWeight(0); w != 6 { // a (5) and c (1)
		t.Errorf("lane 0 weight %d, want 6", w)
	}
	if w := f.LaneWeight(1); w != 1 {
		t.Errorf("lane 1 weight %d, want 1", w)
	}
}

// Every laned stage keeps its main durable on the exact lane-less subject
// (what was stored before lanes drains), and has 2L lane durables with
// disjoint filters, as a work queue needs.
func TestLaneConsumers_are_disjoint_and_keep_the_main_durable(t *testing.T) {
	s := DefaultSettings()
	s.Fair.Lanes = 3
	seen := map[string]bool{}
	for _, st := range Table() {
		cs := s.StageConsumers(st)
		if cs[0].Subject != st.Consumer.Subject || cs[0].Name != st.Name {
			t.Errorf("%s: main durable changed: %+v", st.Name, cs[0])
		}
		lanes := s.LaneConsumers(st)
		if st.Laned != (len(lanes) == 6) || st.Laned == (st.Name == Execute || st.Name == Accumulate) {
			t.Errorf("%s: %d lane durables (laned %v)", st.Name, len(lanes), st.Laned)
		}
		for _, c := range cs {
			if seen[c.Subject] {
				t.Errorf("filter %s twice", c.Subject)
			}
			seen[c.Subject] = true
		}
	}
	if got := s.LaneConsumers(*row(Parse)); got[1].Name != "parse_0b" || got[1].Subject != "toolgate.gate.parse.l.0b" || got[1].Stream != "TOOLGATE_GATE_PARSE" || got[1].Subjects != nil {
		t.Errorf("lane durable %+v", got[1])
	}
	g := s.LaneGroups(*row(Policy))
	if len(g) != 4 || !slices.Equal(g[0].Durables, []string{Policy}) || !slices.Equal(g[3].Durables, []string{"policy_2i", "policy_2b"}) || g[3].Floor != DefaultBatchFloor ||
		g[0].Stream != StreamGates || g[3].Stream != "TOOLGATE_GATE_POLICY" {
		t.Errorf("LaneGroups = %+v", g)
	}
}
