package operate

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/toolgate/toolgate/internal/dlq"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// dlqList is `toolgate dlq ls`: the letters still waiting for the operator
// (--all: also the settled ones), each with what became of its call.
func dlqList(dio dlqIO, args []string) error {
	fs := dlqFlagSet("ls")
	d := addDLQFlags(fs)
	all := fs.Bool("all", false, "also the settled letters: their call executed since, or a newer letter of the call carries it on")
	_, _, sel, done, err := openLetters(fs, d, args, "dlq ls: unexpected %q (filters are flags: --stage, --failure, --seq, ...)")
	if err != nil {
		return err
	}
	defer done()
	shown, hidden := sel.letters, 0
	if !*all {
		shown = nil
		for _, l := range sel.letters {
			if sel.fates[l.Seq].Settled() {
				hidden++
				continue
			}
			shown = append(shown, l)
		}
	}
	shown, beyond := firstN(shown, *d.limit)
	return printLetters(dio.out, shown, sel.fates, hidden, beyond)
}

func printLetters(w io.Writer, letters []dlq.Letter, fates map[uint64]dlq.Fate, hidden, beyond int) error {
	if len(letters) == 0 {
		fmt.Fprintln(w, "no dead letters match")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SEQ\tTIME\tSTAGE\tFAILURE\tCALL\tTOOL\tFATE\tFIRST ERROR")
		bad := 0
		for _, l := range letters {
			id, first := l.CallID, l.FirstError()
			if l.Input() {
				id = "input " + l.ResponseID
			}
			if l.Malformed != "" {
				bad++
				id, first = "MALFORMED", l.Malformed
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Seq, l.Time.Local().Format("01-02 15:04:05"), l.Stage, l.Failure, cmdutil.Clip(id, 40), cmdutil.Clip(l.Tool, 40), fates[l.Seq], cmdutil.Clip(first, 70))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%d dead letter(s); evidence: toolgate dlq show SEQ\n", len(letters))
		if bad > 0 {
			fmt.Fprintf(w, "%d malformed: not written by toolgate as they stand; replay skips them (look with dlq show, remove with dlq purge --seq)\n", bad)
		}
	}
	if beyond > 0 {
		fmt.Fprintf(w, "%d more match beyond --limit (the oldest are shown)\n", beyond)
	}
	if hidden > 0 {
		fmt.Fprintf(w, "%d settled letter(s) hidden (their call executed since, or a newer letter of the call carries it on): --all shows them\n", hidden)
	}
	return nil
}
