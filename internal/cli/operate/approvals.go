package operate

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// Approvals lists the calls waiting for a decision (ls) or shows one with
// its arguments and argument hash (show CALL-ID), so an operator approves
// what was shown: `toolgate approve CALL-ID --by NAME --hash HASH` (or
// `toolgate approve CALL-ID --by NAME` on a terminal, which shows and asks).
func Approvals(args []string) error {
	if len(args) == 0 {
		return cmdutil.UsageError("approvals: want ls or show CALL-ID")
	}
	sub := args[0]
	if sub != "ls" && sub != "show" {
		return cmdutil.UsageError("approvals: unknown subcommand %q (ls, show)", sub)
	}
	fs := cmdutil.WithUsage(flag.NewFlagSet("approvals "+sub, flag.ContinueOnError), "approvals", sub)
	url := cmdutil.NATSFlag(fs)
	var all *bool
	if sub == "ls" {
		all = fs.Bool("all", false, "decided records too, not only pending ones")
	}
	ops, err := cmdutil.ParseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	switch {
	case sub == "ls" && len(ops) != 0:
		return cmdutil.UsageError("approvals ls takes no operands (got %q)", ops[0])
	case sub == "show" && len(ops) != 1:
		return cmdutil.UsageError("approvals show: want one call id")
	}
	ctx, kv, done, err := cmdutil.OpenBucket(*url, streams.BucketApprovals)
	if err != nil {
		return fmt.Errorf("approvals: %w", err)
	}
	defer done()
	store := approval.NewStore(kv)
	now := time.Now()
	switch sub {
	case "ls":
		keys, err := store.Keys(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CALL\tTOOL\tSTATE\tARGS HASH\tEXPIRES\tWHY")
		bad, shown, ttl := 0, 0, ""
		for _, k := range keys {
			r, _, err := store.Get(ctx, k)
			if errors.Is(err, approval.ErrMalformed) {
				bad++
				fmt.Fprintf(os.Stderr, "approvals: skipped: %v\n", err)
				continue
			}
			if err != nil || (!*all && r.State != approval.Pending) {
				continue
			}
			// A call id is the producer's (its response id): shown escaped.
			fmt.Fprint(tw, cmdutil.Printable(fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", r.CallID, r.Tool, r.State, approval.ShortHash(r.ArgsHash), expiry(r, now), r.Why))+"\n")
			shown++
			if r.State == approval.Pending {
				ttl = ttlNote(r)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if ttl != "" {
			fmt.Printf("\n%d shown; %s: decide with toolgate approve|deny CALL-ID --by NAME\n", shown, ttl)
		}
		if bad > 0 {
			fmt.Fprintf(os.Stderr, "approvals: %d malformed record(s) skipped; the policy stage's sweeper denies those whose waiting call it can still read\n", bad)
		}
		return nil
	case "show":
		r, _, err := store.Get(ctx, ops[0])
		if err != nil {
			return fmt.Errorf("approvals show %s: %w", ops[0], err)
		}
		e, err := call.Unmarshal(r.Envelope)
		if err != nil {
			return err
		}
		// What the call carries is hostile: shown with control characters escaped.
		var b strings.Builder
		fmt.Fprintf(&b, "call       %s\ntool       %s\nstate      %s\nwhy        %s\nargs hash  %s\nrequested  %s\nexpires    %s\ncaller     %s (roles %s, tenant %s, identity %s)\n",
			r.CallID, r.Tool, r.State, r.Why, r.ArgsHash, r.RequestedAt.Local().Format(time.DateTime), expiry(r, now),
			cmdutil.OrNone(e.Request.Principal), cmdutil.OrNone(strings.Join(e.Request.Roles, ",")), cmdutil.OrNone(e.Request.Tenant), pipeline.IdentityOf(e))
		if r.By != "" {
			fmt.Fprintf(&b, "decided    by %s at %s: %s\n", r.By, r.DecidedAt.Local().Format(time.DateTime), r.Reason)
		}
		fmt.Fprintf(&b, "arguments\n%s\n", cmdutil.PrettyArgs(e.Arguments))
		if r.State == approval.Pending {
			fmt.Fprintf(&b, "\n%s; approve with: toolgate approve %s --by NAME --hash %s\n", ttlNote(r), r.CallID, approval.ShortHash(r.ArgsHash))
		}
		fmt.Print(cmdutil.Printable(b.String()))
		return nil
	}
	return nil
}
