package bench

import (
	"strings"
	"testing"
	"time"
)

func TestLongest_names_the_stage_that_stood_still_longest_and_none_when_none_did(t *testing.T) {
	s := Longest("step", map[string]time.Duration{"parse": 3 * time.Millisecond, "execute": 4 * time.Second, "policy": time.Second})
	if s.Stage != "execute" || s.Longest != 4*time.Second {
		t.Fatalf("longest %+v, want execute 4s", s)
	}
	none := Longest("quiet", nil)
	if none.Stage != "" || none.Longest != 0 {
		t.Fatalf("no stand-still: %+v", none)
	}
	if MaxStandStill([]StandStill{s, none}) != 4*time.Second {
		t.Fatal("the longest of all steps")
	}
	if out := FormatStandStills([]StandStill{s, none}); !strings.Contains(out, "| step | 4000.0 ms | execute |") || !strings.Contains(out, "none of 1 ms") {
		t.Fatalf("table:\n%s", out)
	}
	g := Goals(Figures{StandStillMs: 251})
	if last := g[len(g)-1]; last.Met || last.Limit != 250 {
		t.Fatalf("goal %+v: 251 ms must miss 250 ms", last)
	}
}
