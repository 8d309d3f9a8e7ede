package publish

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/internal/cli/operate"
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
	if got, _ := operate.When("2h", now); !got.Equal(now.Add(-2 * time.Hour)) {
		t.Errorf("2h -> %v", got)
	}
	if got, _ := operate.When("2026-01-01T00:00:00Z", now); !got.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("RFC 3339 -> %v", got)
	}
	if _, err := operate.When("yesterday", now); err == nil {
		t.Error("an unreadable time was accepted")
	}
}

// Point 14: a call that failed at parse or validate and that repair then
// gave up on (its last step) is shown at the stage where it failed, as
// dlq ls shows it; before, calls ls said repair.
func TestPrintCalls_stage_is_where_the_call_failed_not_who_wrote_last(t *testing.T) {
	at := time.Now()
	steps := func(failedAt string, failure call.Status) []call.Step {
		return []call.Step{{Stage: "accumulate", Status: call.Received, At: at}, {Stage: failedAt, Status: failure, At: at},
			{Stage: "repair", Status: call.Failed, At: at, Note: "no repair model"}}
	}
	parseFail := pipeline.StatusRecord{CallID: "r1-0", ResponseID: "r1", Tool: "t", Status: call.Failed, Failure: call.InvalidJSON, History: steps("parse", call.InvalidJSON)}
	validateFail := pipeline.StatusRecord{CallID: "r1-1", ResponseID: "r1", Tool: "t", Status: call.Failed, Failure: call.SchemaInvalid, History: steps("validate", call.SchemaInvalid)}
	waiting := pipeline.StatusRecord{CallID: "r1-2", ResponseID: "r1", Tool: "t", Status: call.Approved,
		History: []call.Step{{Stage: "policy", Status: call.Approved, At: at}}, Waiting: &pipeline.Wait{Stage: "execute", For: pipeline.WaitExecutor}}
	for _, c := range []struct {
		r    pipeline.StatusRecord
		want string
	}{{parseFail, "parse"}, {validateFail, "validate"}, {waiting, "execute"}} {
		if got := stageOf(c.r); got != c.want {
			t.Errorf("%s: stage %q, want %q", c.r.CallID, got, c.want)
		}
	}
	var b bytes.Buffer
	if err := printCalls(&b, []pipeline.StatusRecord{parseFail, validateFail}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "repair") {
		t.Errorf("calls ls shows repair:\n%s", b.String())
	}
	if !(callFilter{stage: "parse"}).match(parseFail) || (callFilter{stage: "repair"}).match(parseFail) {
		t.Error("--stage does not match the stage shown")
	}
}

// Point 13: a --status or --stage no call can have is a usage error that
// lists the valid values, not a filter that silently matches nothing.
func TestCalls_unknown_status_or_stage_is_a_usage_error_listing_the_valid_ones(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"ls", "--status", "execute"}, []string{`--status "execute" is not a status`, "executed", "schema_invalid"}},
		{[]string{"ls", "--stage", "validation"}, []string{`--stage "validation" is not a stage`, "accumulate, parse, validate"}},
	} {
		err := Calls(c.args)
		if !errors.Is(err, cmdutil.ErrUsage) {
			t.Fatalf("%v: %v, want a usage error", c.args, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v lacks %q", c.args, err, w)
			}
		}
	}
	if err := checkCallFilter("schema_invalid", "validate"); err != nil {
		t.Errorf("valid values refused: %v", err)
	}
}
