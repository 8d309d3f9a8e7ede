package chaos

import (
	"fmt"
	"sort"

	"github.com/toolgate/toolgate/internal/dlq"
)

// Accounting sets the calls whose one outcome is executed beside the calls
// the executor received, and tells the story of every call where the two
// differ, so a count such as "1,999 runs for 2,000 executed calls" names
// its call.
type Accounting struct {
	Executed     int            // calls whose outcome is executed
	DistinctRuns int            // calls the executor received at least once
	RanNotExec   map[string]int // outcome -> calls received that did not end executed (explained: the tool ran, toolgate did not hear it succeed)
	Stories      []string       // one line per call where outcome and runs differ
	Unexplained  int            // executed but never received, or received with no outcome that allows it
	Violations   []string
}

// account compares the results with the executor's runs call by call.
// A call received by the executor and ended outcome_unknown or
// execution_failed is an explained difference; an executed call the
// executor never received, or a received call with no result or an outcome
// that means it never ran, is unexplained and a violation.
func account(acc map[string]string, results []result, runs map[string]int, letters []dlq.Letter) Accounting {
	a := Accounting{RanNotExec: map[string]int{}}
	byCall := map[string]result{}
	for _, r := range results {
		if r.CallID == "" {
			continue
		}
		if _, ok := byCall[r.CallID]; !ok {
			byCall[r.CallID] = r
		}
	}
	lettersOf := map[string][]string{}
	for _, l := range letters {
		if l.CallID != "" {
			lettersOf[l.CallID] = append(lettersOf[l.CallID], l.Failure)
		}
	}
	for _, n := range runs {
		if n > 0 {
			a.DistinctRuns++
		}
	}
	ids := make([]string, 0, len(byCall)+len(runs))
	for id := range byCall {
		ids = append(ids, id)
	}
	for id := range runs {
		if _, ok := byCall[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		r, has := byCall[id]
		n := runs[id]
		if has && r.Status == "executed" {
			a.Executed++
		}
		executed := has && r.Status == "executed"
		if executed == (n > 0) {
			continue
		}
		story := storyOf(id, r, has, n, lettersOf[id], acc)
		a.Stories = append(a.Stories, story)
		if n > 0 && has && ran(r.Status) {
			a.RanNotExec[r.outcome()]++
			continue
		}
		a.Unexplained++
		if len(a.Violations) < 50 {
			a.Violations = append(a.Violations, "accounting: "+story)
		}
	}
	return a
}

// storyOf is what is known of one call: its response and kind, its outcome
// (result sequence, body excerpt), the executor's runs and its dead
// letters.
func storyOf(id string, r result, has bool, runs int, letters []string, acc map[string]string) string {
	rid := r.ResponseID
	if !has {
		return fmt.Sprintf("call %s: the executor received it %d time(s) and it has no result; dead letters %v", id, runs, letters)
	}
	_, accepted := acc[rid]
	body := string(r.Data)
	if len(body) > 240 {
		body = body[:240] + "…"
	}
	return fmt.Sprintf("call %s (response %s, kind %q, accepted %v): outcome %s at results seq %d, the executor received it %d time(s); dead letters %v; result %s",
		id, rid, acc[rid], accepted, r.outcome(), r.Seq, runs, letters, body)
}
