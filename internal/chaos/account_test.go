package chaos

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/dlq"
)

// "1,999 runs for 2,000 calls that each had one result": the accounting
// names the call behind such a difference and tells its story. A call run
// that ended outcome_unknown is an explained difference; an executed call
// the executor never received, and a run with no result, are not.
func TestAccount_names_every_call_where_outcomes_and_runs_differ(t *testing.T) {
	acc := map[string]string{"r1": "weather", "r2": "weather", "r3": "invoice", "r4": "weather"}
	res := func(seq uint64, rid, id, status string) result {
		return result{Seq: seq, ResponseID: rid, CallID: id, Status: status, Data: []byte(`{"call_id":"` + id + `","status":"` + status + `"}`)}
	}
	results := []result{
		res(1, "r1", "r1-0", "executed"),
		res(2, "r2", "r2-0", "executed"),        // never reached the executor
		res(3, "r3", "r3-0", "outcome_unknown"), // ran; toolgate never heard
		res(4, "r4", "r4-0", "executed"),
	}
	runs := map[string]int{"r1-0": 1, "r3-0": 1, "r4-0": 1, "r5-0": 1}
	letters := []dlq.Letter{{CallID: "r3-0", ResponseID: "r3", Failure: "outcome_unknown"}}
	a := account(acc, results, runs, letters)
	if a.Executed != 3 || a.DistinctRuns != 4 {
		t.Fatalf("executed %d, runs %d; want 3 and 4", a.Executed, a.DistinctRuns)
	}
	if a.RanNotExec["outcome_unknown"] != 1 || a.Unexplained != 2 || len(a.Stories) != 3 || len(a.Violations) != 2 {
		t.Fatalf("ran otherwise %v, unexplained %d, stories %q, violations %q", a.RanNotExec, a.Unexplained, a.Stories, a.Violations)
	}
	for _, want := range []string{
		"call r2-0 (response r2, kind \"weather\", accepted true): outcome executed at results seq 2, the executor received it 0 time(s)",
		"call r3-0 (response r3, kind \"invoice\", accepted true): outcome outcome_unknown at results seq 3, the executor received it 1 time(s); dead letters [outcome_unknown]",
		"call r5-0: the executor received it 1 time(s) and it has no result",
	} {
		found := false
		for _, s := range a.Stories {
			found = found || strings.Contains(s, want)
		}
		if !found {
			t.Errorf("no story %q in %q", want, a.Stories)
		}
	}
	rep := Report{Accounting: a}
	if rep.OK() {
		t.Error("a report with unexplained runs is OK")
	}
	var out strings.Builder
	rep.Print(&out)
	if !strings.Contains(out.String(), "VIOLATION       accounting: call r2-0") {
		t.Errorf("the report does not name call r2-0:\n%s", out.String())
	}
}
