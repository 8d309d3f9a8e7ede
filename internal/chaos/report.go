package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Print writes the figures of a run and every violation found.
func (r Report) Print(w io.Writer) {
	fmt.Fprintf(w, "calls           %d offered, %d accepted (publish acked), %d refused\n", r.Offered, r.Accepted, r.Refused)
	fmt.Fprintf(w, "time            load %v, settle %v, total %v\n", r.Load.Round(100*time.Millisecond), r.Settle.Round(100*time.Millisecond), r.Total.Round(100*time.Millisecond))
	fmt.Fprintf(w, "kills           %d SIGKILLs (%s); unexpected exits %d\n", r.KillCount(), counts(r.Kills), r.UnexpectedExits)
	fmt.Fprintf(w, "restarts        NATS %d, redis %d\n", r.NATSRestarts, r.RedisRestart)
	fmt.Fprintf(w, "results         %d messages (%d of responses never acked to the producer); outcomes: %s\n", r.Results, r.Unaccepted, counts(r.Outcomes))
	fmt.Fprintf(w, "tenant path     %d results of calls whose response was published on tenant %s's claimed or batch subject (the rest on the shared subject)\n", r.Claimed, ChaosTenant)
	fmt.Fprintf(w, "executed        %d (executor received %d requests; %d status queries; %d calls reconciled)\n", r.Executed, r.ExecRequests, r.StatusQueries, r.Reconciled)
	fmt.Fprintf(w, "dead-lettered   %d (%s)\n", sum(r.DeadLettered), counts(r.DeadLettered))
	fmt.Fprintf(w, "outcome_unknown %d\n", r.OutcomeUnknown)
	fmt.Fprintf(w, "duplicates      %d\n", r.Duplicates)
	fmt.Fprintf(w, "lost            %d\n", r.Lost)
	fmt.Fprintf(w, "executed twice  %d\n", r.ExecutedTwice)
	fmt.Fprintf(w, "inconsistent    %d; failed calls without exactly one dead letter %d\n", r.Inconsistent, r.MissingLetters)
	fmt.Fprintf(w, "replay          %d letters, %d replayed, %d skipped, %d pending; outcomes: %s; newly executed %d, executed twice %d\n",
		r.Replay.Letters, r.Replay.Replayed, r.Replay.Skipped, r.Replay.Pending, counts(r.Replay.Outcomes), r.Replay.NewlyExecuted, r.Replay.ExecutedTwice)
	r.printCluster(w)
	r.printExecDown(w)
	r.printRSS(w)
	for _, v := range append(append(append(append([]string{}, r.Violations...), r.Replay.Violations...), r.Accounting.Violations...), r.RSSViolations...) {
		fmt.Fprintln(w, "VIOLATION       "+v)
	}
	if r.OK() {
		fmt.Fprintln(w, "verdict         PASS: every accepted call has exactly one outcome; none lost, none executed twice; every dead letter replayed")
	} else {
		fmt.Fprintln(w, "verdict         FAIL")
	}
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
