package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestWatchDeadLetters_labels_stay_bounded_whatever_the_subjects(t *testing.T) {
	m := New()
	counts := map[string]uint64{"toolgate.dlq.parse.invalid_json": 2, "toolgate.dlq.execute.max_deliver": 1, "toolgate.dlq.nosuchstage.x": 4, "toolgate.dlq.parse.a.b": 1}
	for i := range 2 * maxDeadLetterSeries {
		counts[fmt.Sprintf("toolgate.dlq.validate.junk%d", i)] = 1
	}
	m.WatchDeadLetters(func(context.Context) (map[string]uint64, error) { return counts, nil })
	out := scrape(t, m)
	for _, want := range []string{
		`toolgate_dead_letters{failure="invalid_json",stage="parse"} 2`,
		`toolgate_dead_letters{failure="max_deliver",stage="execute"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if n := strings.Count(out, "\ntoolgate_dead_letters{"); n > maxDeadLetterSeries+1 {
		t.Errorf("%d series, want at most %d", n, maxDeadLetterSeries+1)
	}
	if !strings.Contains(out, `toolgate_dead_letters{failure="other",stage="other"}`) {
		t.Error("letters on unknown subjects are not counted as other")
	}
}
