package streams

import (
	"strings"
	"testing"
)

// subjectMatches reports whether subject falls under filter (* one token,
// > the rest).
func subjectMatches(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, t := range f {
		if t == ">" {
			return len(s) > i
		}
		if i >= len(s) || (t != "*" && t != s[i]) {
			return false
		}
	}
	return len(f) == len(s)
}

// Every laned stage's lane subject is stored by TOOLGATE_GATES, and no
// executor-group subject is (those are TOOLGATE_GATE_EXECUTE's). Without
// the lane subjects every call published to a lane got "no response from
// stream": the merge of fair lanes and executor groups cut the gates
// stream to one token after toolgate.gate.
func TestGatesStream_stores_every_lane_subject(t *testing.T) {
	var gates []string
	for _, c := range (Settings{}).StreamConfigs() {
		if c.Name == StreamGates {
			gates = c.Subjects
		}
	}
	in := func(subj string) bool {
		for _, f := range gates {
			if subjectMatches(f, subj) {
				return true
			}
		}
		return false
	}
	laned := 0
	for _, st := range Table() {
		if !in(Gate(st.Name)) && st.Name != Execute {
			t.Errorf("%s: main subject %s not in %s %v", st.Name, Gate(st.Name), StreamGates, gates)
		}
		if !st.Laned {
			continue
		}
		laned++
		for _, lane := range (Fair{}).LaneTokens() {
			if !in(GateLane(st.Name, lane)) {
				t.Errorf("%s: lane subject %s not in %s %v", st.Name, GateLane(st.Name, lane), StreamGates, gates)
			}
		}
	}
	if laned == 0 {
		t.Fatal("no laned stage in the table")
	}
	for _, subj := range executeStreamSubjects() {
		if in(strings.TrimSuffix(subj, ">") + "x.y") {
			t.Errorf("%s overlaps %s %v", subj, StreamGates, gates)
		}
	}
}
