package operate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// dlqShow prints one dead letter's evidence, what became of its call, and
// what a replay of it would do.
func dlqShow(dio dlqIO, args []string) error {
	fs := dlqFlagSet("show")
	url := cmdutil.NATSFlag(fs)
	asJSON := fs.Bool("json", false, "print the stored body as it is")
	operands, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(operands) != 1 {
		return cmdutil.UsageError("dlq show: want one stream sequence (the SEQ column of `toolgate dlq ls`)")
	}
	seq, err := strconv.ParseUint(operands[0], 10, 64)
	if err != nil {
		return cmdutil.UsageError("dlq show: %q is not a stream sequence (the SEQ column of `toolgate dlq ls`)", operands[0])
	}
	nc, js, err := cmdutil.Connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := cmdutil.Timeout()
	defer cancel()
	l, err := dlq.Get(ctx, js, seq)
	if err != nil {
		return cmdutil.ExplainNATS(err, fmt.Sprintf("dead letter %d", seq))
	}
	if *asJSON {
		_, err := dio.out.Write(append(l.Data, '\n'))
		return err
	}
	fates, err := dlq.Fates(ctx, js, []dlq.Letter{l})
	if err != nil {
		return cmdutil.ExplainNATS(err, "status record")
	}
	// What a replay of this letter alone would do, as replay decides it.
	plan, err := dlq.Replay(ctx, js, []dlq.Letter{l}, dlq.Options{DryRun: true})
	if err != nil {
		return cmdutil.ExplainNATS(err, "replay plan")
	}
	if err := printLetter(dio.out, l, fates[l.Seq]); err != nil {
		return err
	}
	printReplayHint(dio.out, l, plan.Items[0])
	return nil
}

// printReplayHint says what works for l: the replay command that would
// republish it, or why replay skips it and what to do instead.
func printReplayHint(w io.Writer, l dlq.Letter, it dlq.Item) {
	switch {
	case it.Skip == "":
		fmt.Fprintf(w, "\nreplay: toolgate dlq replay --seq %d [--dry-run]   (enters %s)\n", l.Seq, it.Stage)
	case call.Status(l.Failure) == call.ApprovalDenied:
		fmt.Fprintf(w, "\nnot replayed by default: %s\nto ask policy again anyway: toolgate dlq replay --seq %d --failure approval_denied\n", it.Skip, l.Seq)
	default:
		fmt.Fprintf(w, "\nnot replayable: %s\nremove it once dealt with: toolgate dlq purge --seq %d\n", it.Skip, l.Seq)
	}
}

func printLetter(w io.Writer, l dlq.Letter, fate dlq.Fate) error {
	fmt.Fprintf(w, "dead letter %d  %s  %s\n", l.Seq, l.Time.Local().Format(time.RFC3339), l.Subject)
	fmt.Fprintf(w, "stage       %s (the stage that failed it)\nfailure     %s\nfate        %s\n", l.Stage, l.Failure, fate)
	if l.Malformed != "" {
		fmt.Fprintf(w, "MALFORMED   %s (not replayed)\n", l.Malformed)
	}
	if l.Input() {
		fmt.Fprintf(w, "kind        input that never became a call, kept as it arrived\n")
		fmt.Fprintf(w, "subject     %s\nresponse    %s\n", l.OrigSubject, l.ResponseID)
	} else {
		e := l.Envelope
		fmt.Fprintf(w, "call        %s  (response %s, index %d of %d)\n", e.CallID, e.ResponseID, e.Batch.Index, e.Batch.Size)
		fmt.Fprintf(w, "tool        %s (revision %d%s)\n", e.ToolName, e.ToolRevision, cmdutil.LetterToolNote(e.ToolName, call.Status(l.Failure)))
		fmt.Fprintf(w, "provider    %s %s  finish %s", e.Provider, e.Model, e.FinishReason)
		if e.ProviderFinish != "" {
			fmt.Fprintf(w, " (%s)", e.ProviderFinish)
		}
		fmt.Fprintf(w, "\nstatus      %s", e.Status)
		if e.Failure != "" {
			fmt.Fprintf(w, " (%s)", e.Failure)
		}
		fmt.Fprintf(w, "\nrepairs     %d   replays %d\n", e.RepairAttempts, e.Replays)
		if e.Request.Principal != "" || e.Request.Tenant != "" {
			fmt.Fprintf(w, "caller      %s  tenant %s  roles %s\n", cmdutil.OrNone(e.Request.Principal), cmdutil.OrNone(e.Request.Tenant), cmdutil.OrNone(strings.Join(e.Request.Roles, ",")))
		}
	}
	section(w, "errors")
	for _, er := range l.Errors {
		fmt.Fprintf(w, "  - %s\n", er)
	}
	if l.Input() {
		section(w, fmt.Sprintf("input (%d bytes)", len(l.Data)))
		fmt.Fprintln(w, indent(pretty(l.Data)))
	} else {
		e := l.Envelope
		section(w, "raw arguments (full; kept only in the dead-letter stream)")
		fmt.Fprintln(w, indent(pretty([]byte(e.RawArguments))))
		section(w, "history")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, s := range e.History {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.At.Local().Format("15:04:05.000"), s.Stage, s.Status, strings.Join(strings.Fields(s.Note), " "))
		}
		tw.Flush()
		if len(e.Repairs) > 0 {
			section(w, "repair attempts")
			for _, r := range e.Repairs {
				fmt.Fprintf(w, "  attempt %d (%s) at %s\n    sent:   %s\n", r.Attempt, r.Failure, r.At.Local().Format("15:04:05"), r.RawArguments)
				for _, er := range r.Errors {
					fmt.Fprintf(w, "    error:  %s\n", er)
				}
				fmt.Fprintf(w, "    answer: %s\n", r.Answer)
			}
		}
	}
	section(w, "headers")
	keys := make([]string, 0, len(l.Header))
	for k := range l.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %s: %s\n", k, strings.Join(l.Header[k], ", "))
	}
	return nil
}

func section(w io.Writer, title string) { fmt.Fprintf(w, "\n%s:\n", title) }

// pretty indents JSON, and leaves anything else (truncated arguments) as it
// is.
func pretty(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") == nil {
		return out.String()
	}
	return string(b)
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
