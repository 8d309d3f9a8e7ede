package operate

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/dlq"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// dlqPurge is `toolgate dlq purge`: it deletes the selected letters, settled
// or not, after the operator types yes (or with --yes).
func dlqPurge(dio dlqIO, args []string) error {
	fs := dlqFlagSet("purge")
	d := addDLQFlags(fs)
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	ctx, js, sel, done, err := openLetters(fs, d, args, "dlq purge: unexpected %q (select with --seq, --stage, --failure, ...)")
	if err != nil {
		return err
	}
	defer done()
	letters, beyond := firstN(sel.letters, *d.limit)
	if len(letters) == 0 {
		fmt.Fprintln(dio.out, "no dead letters match; nothing to purge")
		return nil
	}
	if !*yes {
		settled := 0
		for _, l := range letters {
			if sel.fates[l.Seq].Settled() {
				settled++
			}
		}
		fmt.Fprintf(dio.out, "This deletes %d dead letter(s) (%d settled, %d not) and their evidence (raw arguments) for good.\nType yes to continue: ", len(letters), settled, len(letters)-settled)
		answer, _ := bufio.NewReader(dio.in).ReadString('\n')
		if strings.TrimSpace(answer) != "yes" {
			return errors.New("dlq purge: not confirmed; nothing deleted")
		}
	}
	n, err := dlq.Purge(ctx, js, letters)
	if err != nil {
		return cmdutil.ExplainNATS(err, "purge")
	}
	fmt.Fprintf(dio.out, "purged %d dead letter(s)\n", n)
	if beyond > 0 {
		fmt.Fprintf(dio.out, "%d more match beyond --limit; run it again for the next\n", beyond)
	}
	return nil
}
