package publish

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/pkg/wire"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// Exit codes of `toolgate results` (and `status`'s usage error, 2).
const (
	exitResultsNotOK   = 3 // some call (or the response) ended not ok
	exitResultsWaiting = 4 // nothing yet, or some call has no outcome yet
)

// Results prints a response's outcomes: every call's status, errors,
// result and tool-result message, or the response's own result; with
// --follow it keeps printing new outcomes until every call has one. Exit 0:
// all ok; 3: something ended not ok; 4: nothing yet, or still waiting.
func Results(args []string) error { return runResults(os.Stdout, args) }

// runResults is results writing to w.
func runResults(w io.Writer, args []string) error {
	fs := cmdutil.WithUsage(flag.NewFlagSet("results", flag.ContinueOnError), "results", "")
	url := cmdutil.NATSFlag(fs)
	follow := fs.Bool("follow", false, "keep printing new outcomes until every call has one (or Ctrl-C, or --timeout)")
	asJSON := fs.Bool("json", false, "one JSON object per line: a call's {status, waiting, result} (as status --json), or {\"response_result\": …}")
	limit := fs.Duration("timeout", 0, "with --follow: stop after this long (0: no limit)")
	idle := idleFlag(fs)
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) != 1 {
		return cmdutil.UsageError("results: want one response id (the Toolgate-Response-Id it was published with)")
	}
	rid := ops[0]
	if !call.ValidResponseID(rid) {
		return cmdutil.UsageError("results: %q is not a response id: 1 to 128 letters, digits, '-' and '_'", cmdutil.Printable(rid))
	}
	nc, js, err := cmdutil.Connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := cmdutil.Timeout()
	defer cancel()
	rd := &reader{ctx: ctx, js: js, now: time.Now, idle: *idle}
	out := &outcomeWriter{w: w, json: *asJSON, now: time.Now, idle: *idle}
	rs, err := rd.response(rid)
	if err != nil {
		return err
	}
	if !*follow {
		out.snapshot(rs)
		return verdict(rs)
	}
	fctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *limit > 0 {
		var c context.CancelFunc
		fctx, c = context.WithTimeout(fctx, *limit)
		defer c()
	}
	rd.ctx = fctx
	return rd.follow(fctx, rs, out)
}

// verdict is the exit of a response's outcomes so far: nil when every call
// (or the response) ended ok, exitResultsNotOK when one did not, else
// exitResultsWaiting (nothing yet, or a call without an outcome).
func verdict(rs responseStory) error {
	if rs.Result != nil && !rs.Result.OK {
		return &cmdutil.ExitError{Code: exitResultsNotOK}
	}
	waiting := (len(rs.Calls) == 0 && rs.Result == nil) || len(rs.Calls) < expectedCalls(rs)
	for _, s := range rs.Calls {
		switch {
		case s.Result == nil:
			waiting = true
		case !s.Result.OK:
			return &cmdutil.ExitError{Code: exitResultsNotOK}
		}
	}
	if waiting {
		return &cmdutil.ExitError{Code: exitResultsWaiting}
	}
	return nil
}

// outcomeWriter prints outcomes as text blocks or JSON lines.
type outcomeWriter struct {
	w    io.Writer
	json bool
	now  func() time.Time
	idle time.Duration
}

// snapshot prints everything known of a response now: its stream, its own
// result, and every call with its outcome or what it waits for.
func (o *outcomeWriter) snapshot(rs responseStory) {
	if rs.Stream != nil && !rs.Stream.Settled && !o.json {
		fmt.Fprintf(o.w, "%s %s\n", rs.ResponseID, cmdutil.Printable(rs.Stream.describe(o.now(), o.idle)))
	}
	if rs.Result != nil {
		o.response(*rs.Result)
	}
	for _, s := range rs.Calls {
		o.call(s)
	}
	if len(rs.Calls) == 0 && rs.Result == nil && (rs.Stream == nil || rs.Stream.Settled) && !o.json {
		fmt.Fprintf(o.w, "no outcome yet for response %s: no call, result or stream event is stored under that id (is it the Toolgate-Response-Id it was published with? is `toolgate up` running?)\n", rs.ResponseID)
	}
}

// call prints one call's block, or its JSON line.
func (o *outcomeWriter) call(s story) {
	if o.json {
		o.line(s)
		return
	}
	var b strings.Builder
	writeCallBlock(&b, s, o.now(), true)
	fmt.Fprint(o.w, cmdutil.Printable(b.String()))
}

// response prints a response's own result.
func (o *outcomeWriter) response(r wire.ResponseResult) {
	if o.json {
		o.line(struct {
			R wire.ResponseResult `json:"response_result"`
		}{r})
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", r.ResponseID)
	writeResponseResult(&b, r)
	fmt.Fprint(o.w, cmdutil.Printable(b.String()))
}

func (o *outcomeWriter) line(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	fmt.Fprintf(o.w, "%s\n", data)
}
