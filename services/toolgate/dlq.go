package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/dlq"
)

const dlqUsage = `toolgate dlq ls      [--stage S] [--failure F] [--tool T] [--call ID] [--since 2h] [--until 1h]
toolgate dlq show    SEQ [--json]
toolgate dlq replay  [filters] [--seq N,M] [--to-stage S] [--dry-run] [--wait 60s]
toolgate dlq purge   [filters] [--seq N,M] [--yes]`

// dlqFlags are the filters every dlq subcommand shares.
type dlqFlags struct {
	url                               *string
	stage, failure, tool, callID, seq *string
	since, until                      *string
}

func addDLQFlags(fs *flag.FlagSet) dlqFlags {
	return dlqFlags{
		url:     natsFlag(fs),
		stage:   fs.String("stage", "", "only dead letters of this stage (parse, validate, ...)"),
		failure: fs.String("failure", "", "only this failure class (schema_invalid, truncated, ...)"),
		tool:    fs.String("tool", "", "only calls of this tool"),
		callID:  fs.String("call", "", "only this call id"),
		seq:     fs.String("seq", "", "only these stream sequences, comma-separated"),
		since:   fs.String("since", "", "stored within this long (2h) or after this time (RFC 3339)"),
		until:   fs.String("until", "", "stored more than this long ago (1h) or before this time (RFC 3339)"),
	}
}

// filter turns the flags into a dlq.Filter and the set of sequences asked
// for (nil: any).
func (d dlqFlags) filter(now time.Time) (dlq.Filter, map[uint64]bool, error) {
	f := dlq.Filter{Stage: *d.stage, Failure: *d.failure, Tool: *d.tool, CallID: *d.callID}
	var err error
	if f.Since, err = when(*d.since, now); err != nil {
		return f, nil, fmt.Errorf("--since: %w", err)
	}
	if f.Until, err = when(*d.until, now); err != nil {
		return f, nil, fmt.Errorf("--until: %w", err)
	}
	if *d.seq == "" {
		return f, nil, nil
	}
	seqs := map[uint64]bool{}
	for _, s := range strings.Split(*d.seq, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return f, nil, fmt.Errorf("--seq: %q is not a stream sequence (see `toolgate dlq ls`)", s)
		}
		seqs[n] = true
	}
	return f, seqs, nil
}

// when reads "2h" as that long before now, or an RFC 3339 time.
func when(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a duration (2h) nor an RFC 3339 time", s)
	}
	return t, nil
}

func dlqCmd(args []string) error {
	if len(args) == 0 {
		return errors.New("dlq: want ls, show, replay or purge\n" + dlqUsage)
	}
	switch args[0] {
	case "ls":
		return dlqList(args[1:])
	case "show":
		return dlqShow(args[1:])
	case "replay":
		return dlqReplay(args[1:])
	case "purge":
		return dlqPurge(args[1:])
	}
	return fmt.Errorf("dlq: unknown subcommand %q\n%s", args[0], dlqUsage)
}

// selectLetters connects and lists the dead letters the flags select.
func selectLetters(ctx context.Context, d dlqFlags, js jetstream.JetStream) ([]dlq.Letter, error) {
	f, seqs, err := d.filter(time.Now())
	if err != nil {
		return nil, err
	}
	all, err := dlq.List(ctx, js, f)
	if err != nil {
		return nil, err
	}
	if seqs == nil {
		return all, nil
	}
	var out []dlq.Letter
	for _, l := range all {
		if seqs[l.Seq] {
			out = append(out, l)
		}
	}
	return out, nil
}

func dlqList(args []string) error {
	fs := flag.NewFlagSet("dlq ls", flag.ExitOnError)
	d := addDLQFlags(fs)
	fs.Parse(args)
	nc, js, err := connect(*d.url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := timeout()
	defer cancel()
	letters, err := selectLetters(ctx, d, js)
	if err != nil {
		return err
	}
	return printLetters(os.Stdout, letters)
}

func printLetters(w io.Writer, letters []dlq.Letter) error {
	if len(letters) == 0 {
		fmt.Fprintln(w, "no dead letters match")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tSTAGE\tFAILURE\tCALL\tTOOL\tFIRST ERROR")
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Seq, l.Time.Local().Format("01-02 15:04:05"), l.Stage, l.Failure, clip(id, 40), clip(l.Tool, 40), clip(first, 70))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d dead letter(s); evidence: toolgate dlq show SEQ\n", len(letters))
	if bad > 0 {
		fmt.Fprintf(w, "%d malformed: not written by toolgate as they stand; replay skips them (look with dlq show, remove with dlq purge --seq)\n", bad)
	}
	return nil
}

func dlqPurge(args []string) error {
	fs := flag.NewFlagSet("dlq purge", flag.ExitOnError)
	d := addDLQFlags(fs)
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	fs.Parse(args)
	nc, js, err := connect(*d.url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := timeout()
	defer cancel()
	letters, err := selectLetters(ctx, d, js)
	if err != nil {
		return err
	}
	if len(letters) == 0 {
		fmt.Println("no dead letters match; nothing to purge")
		return nil
	}
	if !*yes {
		fmt.Printf("This deletes %d dead letter(s) and their evidence (raw arguments) for good.\nType yes to continue: ", len(letters))
		answer, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if strings.TrimSpace(answer) != "yes" {
			return errors.New("dlq purge: not confirmed; nothing deleted")
		}
	}
	n, err := dlq.Purge(ctx, js, letters)
	if err != nil {
		return err
	}
	fmt.Printf("purged %d dead letter(s)\n", n)
	return nil
}
