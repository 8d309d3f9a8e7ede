package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
)

func rec(id, rid, tool string, st, failure call.Status, at time.Time) pipeline.StatusRecord {
	return pipeline.StatusRecord{CallID: id, ResponseID: rid, Tool: tool, Status: st, Failure: failure,
		History: []call.Step{{Stage: "validate", Status: st, At: at}}}
}

func TestCallFilter_matches_status_or_failure_class_tool_response_and_age(t *testing.T) {
	now := time.Now()
	r := rec("r1-0", "r1", "get_weather", call.Failed, call.SchemaInvalid, now.Add(-30*time.Minute))
	for _, c := range []struct {
		name string
		f    callFilter
		want bool
	}{
		{"empty", callFilter{}, true},
		{"status", callFilter{status: "failed"}, true},
		{"failure class", callFilter{status: "schema_invalid"}, true},
		{"other status", callFilter{status: "executed"}, false},
		{"tool", callFilter{tool: "get_weather"}, true},
		{"other tool", callFilter{tool: "create_invoice"}, false},
		{"response", callFilter{response: "r1"}, true},
		{"other response", callFilter{response: "r2"}, false},
		{"within since", callFilter{since: now.Add(-time.Hour)}, true},
		{"before since", callFilter{since: now.Add(-10 * time.Minute)}, false},
	} {
		if got := c.f.match(r); got != c.want {
			t.Errorf("%s: match %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPrintCalls_shows_status_with_failure_and_the_first_error_on_one_line(t *testing.T) {
	r := rec("r1-0", "r1", "get_weather", call.Failed, call.SchemaInvalid, time.Now())
	r.Errors = []string{"city:\n  got number,   want string"}
	var b bytes.Buffer
	if err := printCalls(&b, []pipeline.StatusRecord{r}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"CALL", "r1-0", "failed (schema_invalid)", "city: got number, want string", "1 call(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestWhen_reads_durations_and_times(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	if got, _ := when("2h", now); !got.Equal(now.Add(-2 * time.Hour)) {
		t.Errorf("2h -> %v", got)
	}
	if got, _ := when("2026-01-01T00:00:00Z", now); !got.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("RFC 3339 -> %v", got)
	}
	if _, err := when("yesterday", now); err == nil {
		t.Error("an unreadable time was accepted")
	}
}
