package streams

import (
	"strings"
	"testing"
)

// covers reports whether stream subject pattern p matches every subject
// filter f matches (f is a literal or ends in wildcards no wider than p's).
func covers(p, f string) bool {
	pt, ft := strings.Split(p, "."), strings.Split(f, ".")
	for i, tok := range pt {
		if tok == ">" {
			return len(ft) > i
		}
		if i >= len(ft) {
			return false
		}
		if ft[i] == ">" {
			return false
		}
		if tok != "*" && tok != ft[i] {
			return false
		}
	}
	return len(pt) == len(ft)
}

// Every durable's filter, lanes and executor groups included, is stored by
// exactly one stream: a hop whose subject no stream takes is refused at
// publish and the call stands still (the lanes of issue 37 and the groups
// of issue 38 once met a gates stream narrowed to one token).
func TestStreams_every_consumer_filter_is_stored_by_one_stream(t *testing.T) {
	s := DefaultSettings()
	s.Fair.Lanes = 3
	filters := []string{ExecuteGroupFilter("erp"), ExecuteSubject("erp", ExecuteLane), ExecuteSchedule("erp", "x-1")}
	for _, st := range Table() {
		for _, c := range s.StageConsumers(st) {
			if len(c.Subjects) > 0 {
				filters = append(filters, c.Subjects...)
				continue
			}
			filters = append(filters, c.Subject)
		}
		for _, c := range st.Extra {
			filters = append(filters, c.Subject)
		}
	}
	for _, f := range filters {
		var in []string
		for _, sc := range s.StreamConfigs() {
			for _, p := range sc.Subjects {
				if covers(p, f) {
					in = append(in, sc.Name)
				}
			}
		}
		if len(in) != 1 {
			t.Errorf("filter %s is stored by %v, want exactly one stream", f, in)
		}
	}
}

func TestCovers(t *testing.T) {
	for _, c := range []struct {
		p, f string
		want bool
	}{
		{"toolgate.gate.*", "toolgate.gate.parse", true},
		{"toolgate.gate.*", "toolgate.gate.parse.0i", false},
		{"toolgate.gate.*.*", "toolgate.gate.parse.0i", true},
		{"toolgate.gate.execute.g.>", "toolgate.gate.execute.g.erp.>", true},
		{"toolgate.gate.execute.g.>", "toolgate.gate.execute.g", false},
		{"toolgate.in.>", "toolgate.in.t.acme.response", true},
	} {
		if got := covers(c.p, c.f); got != c.want {
			t.Errorf("covers(%s, %s) = %v", c.p, c.f, got)
		}
	}
}
