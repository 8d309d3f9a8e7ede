package chaos

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/dlq"
)

// Verdict is what the results stream, the dead letters and the executor's
// own counts say about every accepted call.
type Verdict struct {
	Results        int            // messages in the results stream
	Outcomes       map[string]int // terminal status -> calls
	DeadLettered   map[string]int // failure class -> dead letters
	Executed       int            // calls that ended executed
	OutcomeUnknown int
	Reconciled     int // calls whose answer came from a status query
	ExecRequests   int // execution requests the executor received
	Duplicates     int // calls with more than one result message
	Lost           int // accepted calls with no result
	ExecutedTwice  int // calls the executor received more than once
	Inconsistent   int // outcome and executor disagree (executed but never run, run but reported not run)
	MissingLetters int // failed calls with no dead letter, or with more than one
	Unaccepted     int // results of responses the producer never saw acked (informational)
	Claimed        int // results of calls of ChaosTenant (the responses published on its claimed and batch subjects)
	Violations     []string
}

func (v *Verdict) violate(format string, args ...any) {
	if len(v.Violations) < 50 {
		v.Violations = append(v.Violations, fmt.Sprintf(format, args...))
	}
}

// ran reports whether status is an outcome of a call the executor may have
// received.
func ran(status string) bool {
	switch status {
	case "executed", "execution_failed", "outcome_unknown":
		return true
	}
	return false
}

// judge checks, for every accepted response (a call id <rid>-0, or a
// response-level result): exactly one result message; the executor received
// the call at most once; an executed call was received exactly once, and a
// received call ended executed, execution_failed or outcome_unknown; every
// failed call left exactly one dead letter.
func judge(acc map[string]string, results []result, runs map[string]int, letters []dlq.Letter) Verdict {
	v := Verdict{Results: len(results), Outcomes: map[string]int{}, DeadLettered: map[string]int{}}
	byKey := map[string][]result{}
	byResponse := map[string]int{}
	for _, r := range results {
		byKey[r.key()] = append(byKey[r.key()], r)
		byResponse[r.ResponseID]++
		if strings.HasPrefix(r.CallID, ChaosTenant+"=") {
			v.Claimed++
		}
	}
	lettersOf := map[string]int{}
	for _, l := range letters {
		v.DeadLettered[l.Failure]++
		key := l.CallID
		if key == "" {
			key = "response:" + l.ResponseID
		}
		lettersOf[key]++
	}
	for rid := range acc {
		if byResponse[rid] == 0 {
			v.Lost++
			v.violate("lost: response %s was accepted and has no result", rid)
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rs := byKey[k]
		r := rs[0]
		if _, ok := acc[r.ResponseID]; !ok {
			v.Unaccepted++
		}
		if len(rs) > 1 {
			v.Duplicates++
			same := true
			for _, o := range rs[1:] {
				same = same && bytes.Equal(o.Data, r.Data)
			}
			v.violate("duplicate: call %s has %d result messages (seqs %d, %d; identical bodies: %v)", k, len(rs), rs[0].Seq, rs[1].Seq, same)
		}
		v.Outcomes[r.outcome()]++
		switch r.Status {
		case "executed":
			v.Executed++
		case "outcome_unknown":
			v.OutcomeUnknown++
		}
		if bytes.Contains(r.Data, []byte("reconciled:")) {
			v.Reconciled++
		}
		n := runs[r.CallID]
		switch {
		case r.Status == "executed" && n == 0:
			v.Inconsistent++
			v.violate("inconsistent: call %s ended executed but the executor never received it", k)
		case n > 0 && !ran(r.Status):
			v.Inconsistent++
			v.violate("inconsistent: call %s was received by the executor and ended %s", k, r.Status)
		}
		failed := r.Status != "executed" && r.Status != "dry_run" && r.Status != "no_tool_calls"
		if failed && lettersOf[k] != 1 {
			v.MissingLetters++
			v.violate("evidence: call %s ended %s with %d dead letters, want 1", k, r.Status, lettersOf[k])
		}
	}
	for id, n := range runs {
		v.ExecRequests += n
		if n > 1 {
			v.ExecutedTwice++
			v.violate("executed twice: call %s reached the executor %d times", id, n)
		}
		if len(byKey[id]) == 0 {
			v.Inconsistent++
			v.violate("inconsistent: call %s reached the executor and has no result", id)
		}
	}
	return v
}
