package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/streams"
)

// status prints one call's current status and history.
func status(args []string) error {
	fs := flag.NewFlagSet("status", flag.ExitOnError)
	url := natsFlag(fs)
	asJSON := fs.Bool("json", false, "print the record as JSON")
	fs.Parse(args)
	if fs.NArg() != 1 {
		return errors.New("status: want one call id (results carry it as call_id)")
	}
	ctx, kv, done, err := openBucket(*url, streams.BucketCalls)
	if err != nil {
		return err
	}
	defer done()
	e, err := kv.Get(ctx, fs.Arg(0))
	if err != nil {
		return fmt.Errorf("status: call %s: %w", fs.Arg(0), err)
	}
	if *asJSON {
		fmt.Println(string(e.Value()))
		return nil
	}
	r, err := dlq.DecodeStatus(fs.Arg(0), e.Value())
	if err != nil {
		return fmt.Errorf("status: %w (toolgate did not write it as it stands; see the raw record with --json)", err)
	}
	fmt.Printf("call      %s\nresponse  %s\ntool      %s (revision %d)\nprovider  %s %s\nsource    %s\nstatus    %s", r.CallID, r.ResponseID, r.Tool, r.ToolRevision, r.Provider, r.Model, r.Source, r.Status)
	if r.Failure != "" {
		fmt.Printf(" (%s)", r.Failure)
	}
	fmt.Printf("\nrepairs   %d\nargs hash %s\n", r.RepairAttempts, r.ArgumentsHash)
	if r.IdempotencyKey != "" {
		fmt.Printf("idem key  %s\n", r.IdempotencyKey)
	}
	for _, er := range r.Errors {
		fmt.Printf("error     %s\n", er)
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSTAGE\tSTATUS\tNOTE")
	for _, s := range r.History {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.At.Local().Format(time.TimeOnly+".000"), s.Stage, s.Status, strings.ReplaceAll(s.Note, "\n", " "))
	}
	return tw.Flush()
}
