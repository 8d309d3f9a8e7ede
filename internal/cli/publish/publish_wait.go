package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/pkg/producer"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// awaitPlan prints the outcomes of plan's responses as they come, until
// every response has all of its outcomes (producer.Tally: the results say
// how many calls each proposed) or wait has passed; then it says what each
// response still waits for and returns the exit code that sums it up.
func awaitPlan(url string, w *producer.Watch, plan []planned, wait time.Duration) error {
	var rids []string
	fresh := map[string]bool{}
	for _, r := range plan {
		if !r.dup {
			rids = append(rids, r.meta.ResponseID)
			fresh[r.meta.ResponseID] = true
		}
	}
	tally := producer.NewTally(rids...)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for len(rids) > 0 && !tally.Complete() {
		o, err := w.Next(ctx)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "toolgate: publish: %v\n", err)
			continue
		}
		printOutcome(o.Data)
		if rid := outcomeResponse(o); fresh[rid] {
			tally.Add(o)
		}
	}
	return publishVerdict(url, w, plan, tally, wait)
}

func outcomeResponse(o producer.Outcome) string {
	if o.Call != nil {
		return o.Call.ResponseID
	}
	return o.Response.ResponseID
}

// publishVerdict says what became of each response and returns its exit code:
// exitPublishConflict for a duplicate or a refused response id, else
// exitPublishWaiting when outcomes are missing, else exitPublishFailed when
// one is not a success, else nil.
func publishVerdict(url string, w *producer.Watch, plan []planned, tally *producer.Tally, wait time.Duration) error {
	byID := map[string]*planned{}
	for i := range plan {
		byID[plan[i].meta.ResponseID] = &plan[i]
	}
	var conflicts, waiting, failed []string
	for _, o := range tally.Responses() {
		r := byID[o.ResponseID]
		switch {
		case producer.Refused(o.Response) != nil:
			conflicts = append(conflicts, o.ResponseID)
			fmt.Printf("conflict: response id %s was used before with other content or by another producer, or its stream's events disagree: nothing of this one ran; publish it again with a new --response-id\n", o.ResponseID)
		case o.Complete():
			if !o.OK() {
				failed = append(failed, o.ResponseID+" ("+strings.Join(failures(o), ", ")+")")
			}
		default:
			waiting = append(waiting, o.ResponseID)
			for _, line := range explainWaiting(url, w, r, o, wait) {
				fmt.Println(line)
			}
		}
	}
	if dups := duplicateIDs(plan); len(dups) > 0 {
		conflicts = append(conflicts, dups...)
		fmt.Println(alreadyPublished(dups))
	}
	switch {
	case len(conflicts) > 0:
		return &cmdutil.ExitError{Code: exitPublishConflict, Err: fmt.Errorf("publish: nothing new ran for %s (duplicate or conflict)", strings.Join(conflicts, ", "))}
	case len(waiting) > 0:
		return &cmdutil.ExitError{Code: exitPublishWaiting, Err: fmt.Errorf("publish: %s still waiting after --wait %v", strings.Join(waiting, ", "), wait)}
	case len(failed) > 0:
		return &cmdutil.ExitError{Code: exitPublishFailed, Err: fmt.Errorf("publish: not every outcome is a success: %s", strings.Join(failed, ", "))}
	}
	return nil
}

// failures lists the statuses of o's outcomes that are not a success, each
// once, with its failure class.
func failures(o *producer.Outcomes) []string {
	var out []string
	add := func(st, failure string, errs []string) {
		if failure != "" {
			st += " " + failure
		} else if st == "rejected" && len(errs) > 0 {
			st += " " + strings.SplitN(errs[0], ":", 2)[0] // its code, e.g. undecodable_response
		}
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	if o.Response != nil {
		add(string(o.Response.Status), "", o.Response.Errors)
	}
	for _, c := range o.Calls {
		if !c.OK {
			add(string(c.Status), string(c.Failure), c.Errors)
		}
	}
	return out
}

// explainWaiting says what a response with outcomes missing waits for: an open
// stream (its progress events say toolgate reads it), or calls that wait,
// as the operator sees them when the admin's credentials are at hand.
func explainWaiting(url string, w *producer.Watch, r *planned, o *producer.Outcomes, wait time.Duration) []string {
	rid := o.ResponseID
	if r.stream() && !r.terminal && r.end == "" {
		line := fmt.Sprintf("waiting: stream %s is still open: its %d events hold no terminal event, so toolgate waits for more; its idle timer ends it transport_incomplete after --stream-idle-timeout (default 60s) without a new event. Publish with --end REASON to end it at once", rid, len(r.events))
		if p, ok := w.Progress(rid); ok {
			line += fmt.Sprintf(" (toolgate has read it up to event %d, %d call(s) so far)", p.Seq, len(p.Calls))
		}
		return []string{line}
	}
	have := fmt.Sprintf("no outcome within %v", wait)
	if o.Expected > 0 {
		have = fmt.Sprintf("%d of %d calls have an outcome after %v", len(o.Calls), o.Expected, wait)
	}
	lines := []string{fmt.Sprintf("waiting: %s: %s (toolgate's NATS stored it)", rid, have)}
	if view, err := operatorView(url, o, outcomesKey(o, r.meta.Tenant)); err == nil {
		return append(lines, view...)
	} else if !errors.Is(err, errNoOperator) {
		lines = append(lines, "  (could not read the calls as the operator: "+err.Error()+")")
	}
	// What a producer may read: the calls toolgate said wait.
	notices := w.Waiting(rid)
	lines = append(lines, waitingLines(notices, time.Now())...)
	if len(notices) > 0 && o.Expected > 0 && len(o.Calls)+len(notices) >= o.Expected {
		return append(lines, "  `toolgate results "+rid+" --follow` prints the outcomes when they come")
	}
	return append(lines,
		"  a call may wait for a human approval (an operator sees it with `toolgate approvals ls` and decides with `toolgate approve CALL-ID --by NAME`),",
		"  or for its executor, or toolgate's stages may be stopped: `toolgate status "+firstMissingCall(o, r.meta.Tenant)+"` says which; `toolgate results "+rid+" --follow` prints the outcomes when they come")
}

// firstMissingCall is the first call id of o without an outcome (the first
// call's while no result said how many calls there are); tenant is the one
// it was published with.
func firstMissingCall(o *producer.Outcomes, tenant string) string {
	have := map[string]bool{}
	for _, c := range o.Calls {
		have[c.CallID] = true
	}
	key := outcomesKey(o, tenant)
	for i := 0; i < o.Expected; i++ {
		if id := call.ID(key, i); !have[id] {
			return id
		}
	}
	return call.ID(key, 0)
}

// outcomesKey is the key o's calls are named by (call.Key): read off a call
// id toolgate sent when there is one, else made of the response id and the
// tenant it was published with.
func outcomesKey(o *producer.Outcomes, tenant string) string {
	for _, c := range o.Calls {
		if k := responseKeyOf(c.CallID, o.ResponseID); k != "" {
			return k
		}
	}
	for _, w := range o.Waiting {
		if k := responseKeyOf(w.CallID, o.ResponseID); k != "" {
			return k
		}
	}
	return call.Key(tenant, o.ResponseID)
}

// printOutcome prints one result message: the call (or "(response)"), its
// tool and status, its errors and result.
func printOutcome(data []byte) {
	var r struct {
		CallID  string   `json:"call_id"`
		Tool    string   `json:"tool"`
		Status  string   `json:"status"`
		Failure string   `json:"failure"`
		Errors  []string `json:"errors"`
		Result  any      `json:"result"`
	}
	_ = json.Unmarshal(data, &r)
	st := r.Status
	if r.Failure != "" {
		st += " (" + r.Failure + ")"
	}
	id := r.CallID
	if id == "" {
		id = "(response)"
	}
	fmt.Print(cmdutil.Printable(fmt.Sprintf("  %-28s %-16s %s", id, r.Tool, st)) + "\n")
	for _, e := range r.Errors {
		fmt.Print(cmdutil.Printable("      - "+e) + "\n")
	}
	if r.Result != nil {
		out, _ := json.Marshal(r.Result)
		fmt.Print(cmdutil.Printable("      result: "+string(out)) + "\n")
	}
}
