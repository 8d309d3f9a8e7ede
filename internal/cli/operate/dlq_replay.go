package operate

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// dlqReplay republishes the selected dead letters and reports what became
// of them.
func dlqReplay(dio dlqIO, args []string) error {
	fs := dlqFlagSet("replay")
	d := addDLQFlags(fs)
	toStage := fs.String("to-stage", "", "send every call to this stage (parse, validate, business, policy, execute), at or before the stage that failed it; a call whose seals show it has not passed the gates before that stage is skipped, and said so; default: the stage its own history says failed it")
	dry := fs.Bool("dry-run", false, "show what would be replayed; publish nothing")
	wait := fs.Duration("wait", time.Minute, "how long to watch toolgate.results for the new outcomes (0: do not watch)")
	operands, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(operands) > 0 {
		return cmdutil.UsageError("dlq replay: unexpected %q (select with --seq, --stage, --failure, ...)", operands[0])
	}
	if err := d.check(); err != nil {
		return err
	}
	if *toStage != "" && streams.Entry(*toStage) == "" {
		return cmdutil.UsageError("dlq replay: --to-stage %q: a replay enters parse, validate, business, policy or execute", *toStage)
	}
	if *wait < 0 {
		return cmdutil.UsageError("dlq replay: --wait %v: want a duration, 0 not to watch", *wait)
	}
	nc, js, err := cmdutil.Connect(*d.url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	lctx, cancel := cmdutil.Timeout()
	sel, err := selectLetters(lctx, d, js)
	cancel()
	if err != nil {
		return err
	}
	if len(sel.letters) == 0 {
		fmt.Fprintln(dio.out, "no dead letters match; nothing to replay")
		return nil
	}
	bar := &progressBar{w: dio.errOut, tty: dio.tty}
	sum, err := dlq.Replay(ctx, js, sel.letters, dlq.Options{
		ToStage: *toStage, DryRun: *dry, Wait: *wait, Progress: bar.update, Limit: *d.limit,
		// A human decision is replayed only when asked for by its class.
		Denied: *d.failure == string(call.ApprovalDenied),
	})
	bar.finish()
	if err != nil {
		return cmdutil.ExplainNATS(err, "replay")
	}
	if *dry {
		return printPlan(dio.out, sum)
	}
	return printSummary(dio.out, sum)
}

func printPlan(w io.Writer, sum dlq.Summary) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tCALL\tTO\tSKIPPED BECAUSE")
	for _, it := range sum.Items {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", it.Seq, it.CallID, it.Subject, it.Skip)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ndry run: %d would be replayed, %d skipped; nothing was published\n", sum.Replayed, sum.Skipped)
	if sum.Beyond > 0 {
		fmt.Fprintf(w, "%d more letter(s) beyond --limit are left for a later run\n", sum.Beyond)
	}
	return nil
}

// settledSkip reports a skip because the call executed since (dlq.Replay's
// reason starts so).
func settledSkip(it dlq.Item) bool { return strings.HasPrefix(it.Skip, "settled:") }

func printSummary(w io.Writer, sum dlq.Summary) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SELECTED\tREPLAYED\tNOW EXECUTED\tFAILED AGAIN\tSTILL PENDING\tSKIPPED")
	fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\n", sum.Selected, sum.Replayed, sum.Executed, sum.FailedAgain, sum.Pending, sum.Skipped)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(sum.Outcomes) > 0 {
		fmt.Fprintln(w, "\nnew outcomes:")
		keys := make([]string, 0, len(sum.Outcomes))
		for k := range sum.Outcomes {
			keys = append(keys, string(k))
		}
		sort.Strings(keys)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, k := range keys {
			fmt.Fprintf(tw, "  %s\t%d\n", k, sum.Outcomes[call.Status(k)])
		}
		tw.Flush()
	}
	settled, shown := 0, 0
	for _, it := range sum.Items {
		if settledSkip(it) {
			settled++
			continue
		}
		if it.Skip == "" {
			continue
		}
		if shown == 0 {
			fmt.Fprintln(w, "\nskipped:")
		}
		if shown++; shown > 20 {
			fmt.Fprintln(w, "  ... and more (see --dry-run)")
			break
		}
		fmt.Fprintf(w, "  seq %d %s: %s\n", it.Seq, it.CallID, it.Skip)
	}
	if settled > 0 {
		fmt.Fprintf(w, "\nskipped %d settled letter(s): their call has executed since; nothing ran again (toolgate dlq ls --all shows them)\n", settled)
	}
	if sum.Beyond > 0 {
		fmt.Fprintf(w, "%d more letter(s) beyond --limit are left for a later run\n", sum.Beyond)
	}
	if sum.Pending > 0 {
		fmt.Fprintln(w, "\nstill pending: no outcome within --wait (waiting for approval, or still in flight); check with toolgate calls ls --since 1h")
	}
	if sum.FailedAgain > 0 {
		fmt.Fprintln(w, "failed again: they are dead letters again; see toolgate dlq ls --since 10m")
	}
	return nil
}
