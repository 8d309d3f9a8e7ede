package operate

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// Approve lets a waiting call run: it records who approved it, why, and the
// argument hash approved, and sends the call back to the policy gate.
// Without --hash it shows the call and asks on the terminal (confirm.go);
// without a terminal it refuses.
func Approve(args []string) error {
	return decide("approve", approval.Approved, args, stdConsole())
}

// minHash is the shortest --hash accepted: the 16 digits `toolgate approvals
// ls` prints. A shorter prefix would match almost any arguments.
const minHash = 16

// decide is approve and deny: a compare-and-set on the call's approval
// record, then the waiting envelope goes back to the policy gate, which
// checks the record again (tool name and argument hash) before anything
// runs. An approval is always bound to a hash the operator saw: the one
// given with --hash, or the one shown and confirmed on con.
func decide(cmd string, state approval.State, args []string, con console) error {
	fs := cmdutil.WithUsage(flag.NewFlagSet(cmd, flag.ContinueOnError), cmd, "")
	url := cmdutil.NATSFlag(fs)
	by := fs.String("by", "", "who decides (required; kept in the call's history)")
	reason := fs.String("reason", "", "why (kept in the call's history)")
	// No backquotes in the text: flag would take the quoted words for the
	// placeholder and print "-hash toolgate approvals ls".
	hash := fs.String("hash", "", "the argument HASH you reviewed, at least its first 16 digits as 'toolgate approvals ls' prints them; refused if the call's arguments differ")
	// Flags may follow the call id: toolgate approve CALL-ID --by NAME.
	pos, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cmdutil.UsageError("%s: want one call id: toolgate %s CALL-ID --by NAME [--reason TEXT]", cmd, cmd)
	}
	id := pos[0]
	if *by == "" {
		return cmdutil.UsageError("%s: --by NAME is required: the decision is recorded with who made it", cmd)
	}
	// toolgate status prints the hash as sha256:<hex> (as records and audit
	// events carry it), approvals ls without the prefix: take either.
	*hash = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(*hash)), "sha256:")
	if *hash != "" && len(*hash) < minHash {
		return cmdutil.UsageError("%s: --hash %s is too short: give at least the %d digits `toolgate approvals show %s` prints", cmd, *hash, minHash, id)
	}
	asks := state == approval.Approved && *hash == ""
	if asks && !con.terminal {
		return fmt.Errorf("%s: no terminal to confirm on, and no --hash: review the call with `toolgate approvals show %s`, then run `toolgate approve %s --by %s --hash HASH` with the args hash it shows", cmd, id, id, *by)
	}
	nc, js, err := cmdutil.Connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := cmdutil.Timeout()
	defer cancel()
	kv, err := js.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	store := approval.NewStore(kv)
	notWaiting := fmt.Errorf("%s: call %s is not waiting for approval (see `toolgate status %s`)", cmd, id, id)
	if asks {
		shown, _, err := store.Get(ctx, id)
		if errors.Is(err, approval.ErrNotFound) {
			return notWaiting
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		if shown.State == approval.Expired || shown.Due(time.Now()) {
			return fmt.Errorf("%s: %w", cmd, expiredError(shown))
		}
		if shown.State != approval.Pending {
			return fmt.Errorf("%s: call %s is already %s (by %s)", cmd, id, shown.State, shown.By)
		}
		// The prompt waits on a human: the store's deadline starts after it.
		cancel()
		ok, err := con.confirm(shown)
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		if !ok {
			return fmt.Errorf("%s: not approved; call %s still waits for a decision", cmd, id)
		}
		*hash = shown.ArgsHash // approve exactly what was shown, or nothing
		ctx, cancel = cmdutil.Timeout()
		defer cancel()
	}
	rec, rev, err := store.Decide(ctx, id, state, *by, *reason, *hash, time.Now())
	if errors.Is(err, approval.ErrNotFound) {
		return notWaiting
	}
	if errors.Is(err, approval.ErrDecided) && (rec.State == approval.Expired || rec.Due(time.Now())) {
		return fmt.Errorf("%s: %w", cmd, expiredError(rec))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if err := store.Resume(ctx, js, rec, rev); err != nil {
		// The decision is recorded; the policy stage's sweeper resends it.
		return fmt.Errorf("%s: %s recorded, but the call could not be sent on (%w); the policy stage will resend it", cmd, rec.State, err)
	}
	fmt.Fprintf(con.out, "%s %s: %s (arguments %s) by %s\n", rec.CallID, rec.State, rec.Tool, approval.ShortHash(rec.ArgsHash), rec.By)
	return nil
}

// console is where decide shows a call and reads the operator's answer.
type console struct {
	in       io.Reader
	out      io.Writer
	terminal bool // in is a terminal a human types on
}

// stdConsole is the process's standard input and output.
func stdConsole() console {
	return console{in: os.Stdin, out: os.Stdout, terminal: cmdutil.IsTerminal(os.Stdin)}
}
