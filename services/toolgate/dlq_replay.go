package main

import (
	"context"
	"flag"
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
)

// dlqReplay republishes the selected dead letters and reports what became
// of them.
func dlqReplay(args []string) error {
	fs := flag.NewFlagSet("dlq replay", flag.ExitOnError)
	d := addDLQFlags(fs)
	toStage := fs.String("to-stage", "", "send every call to this stage (parse, validate, business, policy, execute), at or before the stage that failed it; a call whose seals show it has not passed the gates before that stage is skipped, and said so; default: the stage its own history says failed it")
	dry := fs.Bool("dry-run", false, "show what would be replayed; publish nothing")
	wait := fs.Duration("wait", time.Minute, "how long to watch toolgate.results for the new outcomes (0: do not watch)")
	fs.Parse(args)
	nc, js, err := connect(*d.url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	lctx, cancel := timeout()
	letters, err := selectLetters(lctx, d, js)
	cancel()
	if err != nil {
		return err
	}
	if len(letters) == 0 {
		fmt.Println("no dead letters match; nothing to replay")
		return nil
	}
	bar := &progressBar{w: os.Stderr}
	sum, err := dlq.Replay(ctx, js, letters, dlq.Options{ToStage: *toStage, DryRun: *dry, Wait: *wait, Progress: bar.update})
	bar.done()
	if err != nil {
		return err
	}
	if *dry {
		return printPlan(os.Stdout, sum)
	}
	return printSummary(os.Stdout, sum)
}

// progressBar draws one line per phase on a terminal-like writer.
type progressBar struct {
	w     io.Writer
	phase string
	last  time.Time
}

func (b *progressBar) update(phase string, done, total int) {
	if phase != b.phase && b.phase != "" {
		fmt.Fprintln(b.w)
	}
	b.phase = phase
	// Redraw at most every 50ms, and always at the end of a phase.
	if done != total && time.Since(b.last) < 50*time.Millisecond {
		return
	}
	b.last = time.Now()
	const width = 30
	filled := 0
	if total > 0 {
		filled = done * width / total
	}
	label := map[string]string{"publish": "replaying", "wait": "outcomes "}[phase]
	fmt.Fprintf(b.w, "\r%s [%s%s] %d/%d", label, strings.Repeat("#", filled), strings.Repeat("-", width-filled), done, total)
}

func (b *progressBar) done() {
	if b.phase != "" {
		fmt.Fprintln(b.w)
	}
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
	return nil
}

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
	shown := 0
	for _, it := range sum.Items {
		if it.Skip == "" {
			continue
		}
		if shown == 0 {
			fmt.Fprintln(w, "\nskipped:")
		}
		if shown++; shown > 20 {
			fmt.Fprintf(w, "  ... and %d more (see --dry-run)\n", sum.Skipped-20)
			break
		}
		fmt.Fprintf(w, "  seq %d %s: %s\n", it.Seq, it.CallID, it.Skip)
	}
	if sum.Pending > 0 {
		fmt.Fprintln(w, "\nstill pending: no outcome within --wait (waiting for approval, or still in flight); check with toolgate calls ls --since 1h")
	}
	if sum.FailedAgain > 0 {
		fmt.Fprintln(w, "failed again: they are dead letters again; see toolgate dlq ls --since 10m")
	}
	return nil
}
