package chaos

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/dlq"
)

func res(seq uint64, rid, status, failure string) result {
	return result{Seq: seq, ResponseID: rid, CallID: rid + "-0", Status: status, Failure: failure, Data: []byte(rid + status)}
}

// The checker itself must catch what the chaos run looks for, or a PASS
// means nothing.
func TestJudge_finds_each_kind_of_violation(t *testing.T) {
	acc := map[string]string{"a": "valid", "b": "valid", "c": "invalid_json"}
	letterC := dlq.Letter{CallID: "c-0", Failure: "invalid_json"}
	// Each case names the one violation it must raise (its prefix, as the
	// report prints it; "" for none) and the counters behind it: a counter
	// alone is not a verdict, Report.OK reads only the violations.
	cases := []struct {
		name      string
		results   []result
		runs      map[string]int
		letters   []dlq.Letter
		violation string
		check     func(v Verdict) bool
	}{
		{"clean run", []result{res(1, "a", "executed", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1, "b-0": 1}, []dlq.Letter{letterC}, "",
			func(v Verdict) bool { return v.Executed == 2 && v.Outcomes["failed:invalid_json"] == 1 }},
		{"lost call", []result{res(1, "a", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1}, []dlq.Letter{letterC}, "lost: response b ",
			func(v Verdict) bool { return v.Lost == 1 }},
		{"identical duplicate result", []result{res(1, "a", "executed", ""), res(2, "a", "executed", ""), res(3, "b", "executed", ""), res(4, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1, "b-0": 1}, []dlq.Letter{letterC}, "duplicate: call a-0 ",
			func(v Verdict) bool { return v.Duplicates == 1 }},
		{"executed twice", []result{res(1, "a", "executed", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 2, "b-0": 1}, []dlq.Letter{letterC}, "executed twice: call a-0 ",
			func(v Verdict) bool { return v.ExecutedTwice == 1 && v.ExecRequests == 3 }},
		{"executed without reaching the tool", []result{res(1, "a", "executed", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1}, []dlq.Letter{letterC}, "inconsistent: call b-0 ended executed but the executor never received it",
			func(v Verdict) bool { return v.Inconsistent == 1 }},
		{"ran but reported as never run", []result{res(1, "a", "executed", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1, "b-0": 1, "c-0": 1}, []dlq.Letter{letterC}, "inconsistent: call c-0 was received by the executor and ended failed",
			func(v Verdict) bool { return v.Inconsistent == 1 }},
		{"failure without evidence", []result{res(1, "a", "executed", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1, "b-0": 1}, nil, "evidence: call c-0 ended failed with 0 dead letters",
			func(v Verdict) bool { return v.MissingLetters == 1 }},
		{"outcome unknown that did run is allowed", []result{res(1, "a", "outcome_unknown", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1, "b-0": 1}, []dlq.Letter{letterC, {CallID: "a-0", Failure: "outcome_unknown"}}, "",
			func(v Verdict) bool { return v.OutcomeUnknown == 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := judge(acc, c.results, c.runs, c.letters)
			if !c.check(v) {
				t.Errorf("counters %+v", v)
			}
			ok := Report{Verdict: v}.OK()
			switch {
			case c.violation == "" && !ok:
				t.Fatalf("a clean case failed the run: %q", v.Violations)
			case c.violation == "":
			case ok:
				t.Fatalf("passed the run, want the violation %q (counters %+v)", c.violation, v)
			case len(v.Violations) != 1 || !strings.HasPrefix(v.Violations[0], c.violation):
				t.Fatalf("violations %q, want exactly one starting %q", v.Violations, c.violation)
			}
		})
	}
}
