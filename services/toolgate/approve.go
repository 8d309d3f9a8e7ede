package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/streams"
)

// approve lets a waiting call run: it records who approved it and why, and
// sends the call back to the policy gate.
func approve(args []string) error { return decide("approve", approval.Approved, args) }

// decide is approve and deny: a compare-and-set on the call's approval
// record, then the waiting envelope goes back to the policy gate, which
// checks the record again (tool name and argument hash) before anything
// runs.
func decide(cmd string, state approval.State, args []string) error {
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	url := natsFlag(fs)
	by := fs.String("by", "", "who decides (required; kept in the call's history)")
	reason := fs.String("reason", "", "why (kept in the call's history)")
	hash := fs.String("hash", "", "the argument hash you reviewed (or a prefix of it, as `toolgate approvals show` prints it); refused if the call's arguments have changed since")
	// Flags may follow the call id: toolgate approve CALL-ID --by NAME.
	var pos []string
	for rest := args; ; {
		fs.Parse(rest)
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(pos) != 1 {
		return fmt.Errorf("%s: want one call id: toolgate %s CALL-ID --by NAME [--reason TEXT]", cmd, cmd)
	}
	if *by == "" {
		return fmt.Errorf("%s: --by NAME is required: the decision is recorded with who made it", cmd)
	}
	nc, js, err := connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := timeout()
	defer cancel()
	kv, err := js.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	store := approval.NewStore(kv)
	rec, rev, err := store.Decide(ctx, pos[0], state, *by, *reason, *hash, time.Now())
	if errors.Is(err, approval.ErrNotFound) {
		return fmt.Errorf("%s: call %s is not waiting for approval (see `toolgate status %s`)", cmd, pos[0], pos[0])
	}
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if err := store.Resume(ctx, js, rec, rev); err != nil {
		// The decision is recorded; the policy stage's sweeper resends it.
		return fmt.Errorf("%s: %s recorded, but the call could not be sent on (%w); the policy stage will resend it", cmd, rec.State, err)
	}
	fmt.Printf("%s %s: %s (arguments %s) by %s\n", rec.CallID, rec.State, rec.Tool, approval.ShortHash(rec.ArgsHash), rec.By)
	return nil
}
