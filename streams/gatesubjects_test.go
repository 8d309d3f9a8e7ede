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

// storedBy names the streams of (Settings{}).StreamConfigs() whose subjects
// match subj.
func storedBy(subj string) []string {
	var out []string
	for _, c := range (Settings{}).StreamConfigs() {
		for _, f := range c.Subjects {
			if subjectMatches(f, subj) {
				out = append(out, c.Name)
				break
			}
		}
	}
	return out
}

// Every laned stage's lane subject is stored by its own stream
// (TOOLGATE_GATE_<STAGE>) and by no other, its main subject and its lanes
// of before their stream by TOOLGATE_GATES only, and no executor-group
// subject by either. Without the lane subjects every call published to a
// lane got "no response from stream": the merge of fair lanes and executor
// groups cut the gates stream to one token after toolgate.gate; with two
// streams on one subject the server refuses the second.
func TestGateStreams_store_every_lane_subject_once(t *testing.T) {
	only := func(subj, stream string) {
		t.Helper()
		if got := storedBy(subj); len(got) != 1 || got[0] != stream {
			t.Errorf("%s is stored by %v, want %s only", subj, got, stream)
		}
	}
	laned := 0
	for _, st := range Table() {
		if st.Name != Execute && st.Name != Accumulate {
			only(Gate(st.Name), StreamGates)
		}
		if !st.Laned {
			continue
		}
		laned++
		if LaneStream(st.Name) != "TOOLGATE_GATE_"+strings.ToUpper(st.Name) {
			t.Errorf("%s: lane stream %s", st.Name, LaneStream(st.Name))
		}
		for _, lane := range (Fair{Lanes: MaxLanes}).LaneTokens() {
			only(GateLane(st.Name, lane), LaneStream(st.Name))
			only(LegacyGateLane(st.Name, lane), StreamGates)
		}
	}
	if laned != 5 || len(LaneStreams()) != laned {
		t.Fatalf("%d laned stages, %d lane streams, want 5", laned, len(LaneStreams()))
	}
	for _, subj := range executeStreamSubjects() {
		only(strings.TrimSuffix(subj, ">")+"x.y", StreamExecute)
	}
}

// A laned stage's lane durables are in its own stream, its main durable
// in TOOLGATE_GATES, and DurableStream says so for each.
func TestLaneConsumers_live_in_their_stages_stream(t *testing.T) {
	s := Settings{Fair: Fair{Lanes: 2}}
	for _, st := range Table() {
		for _, c := range s.StageConsumers(st) {
			if got := DurableStream(st.Name, c.Name); got != c.Stream {
				t.Errorf("DurableStream(%s, %s) = %s, durable is in %s", st.Name, c.Name, got, c.Stream)
			}
			if st.Laned && c.Name != st.Name && c.Stream != LaneStream(st.Name) {
				t.Errorf("%s: lane durable %s in %s", st.Name, c.Name, c.Stream)
			}
		}
	}
}
