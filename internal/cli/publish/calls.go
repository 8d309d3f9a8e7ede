package publish

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/inflight"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// callFilter selects status records; a zero field matches everything.
type callFilter struct {
	response, status, stage, tool string
	since                         time.Time
}

// match reports whether r passes f. --status matches the status or, for a
// failed call, its failure class; --stage the stage calls ls shows
// (stageOf: where a failed call failed).
func (f callFilter) match(r pipeline.StatusRecord) bool {
	switch {
	case f.response != "" && r.ResponseID != f.response,
		f.status != "" && string(r.Status) != f.status && string(r.Failure) != f.status,
		f.stage != "" && stageOf(r) != f.stage,
		f.tool != "" && r.Tool != f.tool,
		!f.since.IsZero() && updated(r).Before(f.since):
		return false
	}
	return true
}

// updated is the time of a record's last transition.
func updated(r pipeline.StatusRecord) time.Time {
	if n := len(r.History); n > 0 {
		return r.History[n-1].At
	}
	return time.Time{}
}

// calls: ls.
func Calls(args []string) error {
	if len(args) == 0 || args[0] != "ls" {
		return cmdutil.UsageError("calls: want ls (toolgate calls ls [--response ID] [--status S] [--stage S] [--tool T] [--since 1h] [--limit N])")
	}
	fs := cmdutil.WithUsage(flag.NewFlagSet("calls ls", flag.ContinueOnError), "calls", "ls")
	url := cmdutil.NATSFlag(fs)
	response := fs.String("response", "", "only the calls of this response id")
	status := fs.String("status", "", "only calls in this status or failure class (executed, schema_invalid, ...)")
	stage := fs.String("stage", "", "only calls at this stage: where a failed call failed, where a waiting call waits (parse, validate, ...)")
	toolName := fs.String("tool", "", "only calls of this tool")
	since := fs.Duration("since", 0, "only calls updated within this long (1h, 15m)")
	limit := fs.Int("limit", 0, "show at most this many, newest last (0: all)")
	ops, err := cmdutil.ParseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return cmdutil.UsageError("calls ls: unexpected %q (filters are flags: --response ID, --status S, ...)", cmdutil.Printable(ops[0]))
	}
	if err := checkCallFilter(*status, *stage); err != nil {
		return err
	}
	f := callFilter{response: *response, status: *status, stage: *stage, tool: *toolName}
	if *since > 0 {
		f.since = time.Now().Add(-*since)
	}
	nc, js, err := cmdutil.Connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := cmdutil.Timeout()
	defer cancel()
	recs, err := scanCalls(ctx, js, f)
	if err != nil {
		return err
	}
	if *limit > 0 && len(recs) > *limit {
		recs = recs[len(recs)-*limit:]
	}
	return printCalls(os.Stdout, recs)
}

// scanCalls reads every status record in the calls bucket that passes f,
// oldest update first.
func scanCalls(ctx context.Context, js jetstream.JetStream, f callFilter) ([]pipeline.StatusRecord, error) {
	kv, err := js.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "calls: bucket "+streams.BucketCalls)
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "calls: bucket "+streams.BucketCalls)
	}
	defer w.Stop()
	var out []pipeline.StatusRecord
	bad := 0
	for e := range w.Updates() {
		if e == nil {
			break // every current value has been delivered
		}
		r, err := dlq.DecodeStatus(e.Key(), e.Value())
		if err != nil {
			if bad++; bad <= 10 {
				fmt.Fprintf(os.Stderr, "calls: skipped: %v\n", err)
			}
			continue
		}
		if f.match(r) {
			out = append(out, r)
		}
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "calls: %d malformed status record(s) skipped\n", bad)
	}
	if ctx.Err() != nil {
		return nil, cmdutil.ExplainNATS(ctx.Err(), "calls: reading bucket "+streams.BucketCalls)
	}
	// The calls in flight have no record until they wait or end (issue 30):
	// their hops say where they are.
	have := map[string]bool{}
	for _, r := range out {
		have[r.CallID] = true
	}
	// The calls that ended without a record (issue 30): their results are
	// their records.
	subject := ""
	if f.response != "" {
		subject = streams.ResultsOf(f.response)
	}
	ended, err := records.Reader{JS: js}.List(ctx, subject, inflight.MaxScan, func(id string) bool { return have[id] }, f.match)
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "calls: reading the results")
	}
	for _, r := range ended {
		have[r.CallID] = true
	}
	out = append(out, ended...)
	moving, err := inflight.List(ctx, js, 0, func(r pipeline.StatusRecord) bool { return !have[r.CallID] && f.match(r) })
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "calls: reading the calls in flight")
	}
	out = append(out, moving...)
	sort.SliceStable(out, func(i, j int) bool { return updated(out[i]).Before(updated(out[j])) })
	return out, nil
}

func printCalls(w io.Writer, recs []pipeline.StatusRecord) error {
	if len(recs) == 0 {
		fmt.Fprintln(w, "no calls match")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UPDATED\tCALL\tTOOL\tSTATUS\tSTAGE\tREPAIRS\tERROR")
	for _, r := range recs {
		st, stage := string(r.Status), stageOf(r)
		if r.Failure != "" {
			st += " (" + string(r.Failure) + ")"
		}
		first := ""
		if len(r.Errors) > 0 {
			first = cmdutil.Clip(strings.Join(strings.Fields(r.Errors[0]), " "), 60)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", updated(r).Local().Format("01-02 15:04:05"), r.CallID, r.Tool, st, stage, r.RepairAttempts, first)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d call(s); details: toolgate status CALL-ID\n", len(recs))
	return nil
}

// checkCallFilter refuses a --status or --stage that no call can have, with
// the valid values: a typo would otherwise match nothing, silently.
func checkCallFilter(status, stage string) error {
	if status != "" && !slices.Contains(call.Statuses(), call.Status(status)) {
		var names []string
		for _, s := range call.Statuses() {
			names = append(names, string(s))
		}
		sort.Strings(names)
		return cmdutil.UsageError("calls ls: --status %q is not a status or failure class; use one of %s", cmdutil.Printable(status), strings.Join(names, ", "))
	}
	if stage != "" && !streams.IsStage(stage) {
		return cmdutil.UsageError("calls ls: --stage %q is not a stage; use one of %s", cmdutil.Printable(stage), strings.Join(streams.Names(), ", "))
	}
	return nil
}
