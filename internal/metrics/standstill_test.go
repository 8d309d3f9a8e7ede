package metrics

import (
	"strings"
	"testing"
	"time"
)

func TestGap_records_stand_stills_and_takes_the_longest_per_stage_once(t *testing.T) {
	m := New()
	m.Gap("parse", 3*time.Millisecond)
	m.Gap("parse", 4*time.Second)
	m.Gap("execute", 2*time.Millisecond)
	out := scrape(t, m)
	for _, want := range []string{
		`toolgate_stage_stand_still_seconds_count{stage="parse"} 2`,
		`toolgate_stage_stand_still_seconds_bucket{stage="parse",le="2.5"} 1`,
		`toolgate_stage_stand_still_seconds_count{stage="execute"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	got := m.TakeLongestGaps()
	if got["parse"] != 4*time.Second || got["execute"] != 2*time.Millisecond || len(got) != 2 {
		t.Fatalf("longest %v, want parse 4s, execute 2ms", got)
	}
	if again := m.TakeLongestGaps(); len(again) != 0 {
		t.Fatalf("taken twice: %v", again)
	}
}
