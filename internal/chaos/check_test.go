package chaos

import (
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
	cases := []struct {
		name    string
		results []result
		runs    map[string]int
		letters []dlq.Letter
		check   func(v Verdict) bool
	}{
		{"clean run", []result{res(1, "a", "executed", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1, "b-0": 1}, []dlq.Letter{letterC},
			func(v Verdict) bool {
				return len(v.Violations) == 0 && v.Executed == 2 && v.Outcomes["failed:invalid_json"] == 1
			}},
		{"lost call", []result{res(1, "a", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1}, []dlq.Letter{letterC},
			func(v Verdict) bool { return v.Lost == 1 && len(v.Violations) == 1 }},
		{"identical duplicate result", []result{res(1, "a", "executed", ""), res(2, "a", "executed", ""), res(3, "b", "executed", ""), res(4, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1, "b-0": 1}, []dlq.Letter{letterC},
			func(v Verdict) bool { return v.Duplicates == 1 && len(v.Violations) == 1 }},
		{"executed twice", []result{res(1, "a", "executed", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 2, "b-0": 1}, []dlq.Letter{letterC},
			func(v Verdict) bool { return v.ExecutedTwice == 1 && v.ExecRequests == 3 }},
		{"executed without reaching the tool", []result{res(1, "a", "executed", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1}, []dlq.Letter{letterC},
			func(v Verdict) bool { return v.Inconsistent == 1 }},
		{"ran but reported as never run", []result{res(1, "a", "executed", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1, "b-0": 1, "c-0": 1}, []dlq.Letter{letterC},
			func(v Verdict) bool { return v.Inconsistent == 1 }},
		{"failure without evidence", []result{res(1, "a", "executed", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1, "b-0": 1}, nil,
			func(v Verdict) bool { return v.MissingLetters == 1 }},
		{"outcome unknown that did run is allowed", []result{res(1, "a", "outcome_unknown", ""), res(2, "b", "executed", ""), res(3, "c", "failed", "invalid_json")},
			map[string]int{"a-0": 1, "b-0": 1}, []dlq.Letter{letterC, {CallID: "a-0", Failure: "outcome_unknown"}},
			func(v Verdict) bool { return len(v.Violations) == 0 && v.OutcomeUnknown == 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := judge(acc, c.results, c.runs, c.letters)
			if !c.check(v) {
				t.Fatalf("verdict %+v", v)
			}
		})
	}
}
