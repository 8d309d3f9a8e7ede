package operate

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

const dlqUsage = `toolgate dlq ls      [filters] [--all] [--limit N]
toolgate dlq show    SEQ [--json]
toolgate dlq replay  [filters] [--limit N] [--to-stage S] [--dry-run] [--wait 60s]
toolgate dlq purge   [filters] [--limit N] [--yes]
filters: [--stage S] [--failure F] [--tool T] [--call ID] [--seq N,M] [--since 2h] [--until 1h]`

// dlqIO is where the dlq commands read and write; tty says errOut is a
// terminal, where progress redraws one line.
type dlqIO struct {
	out, errOut io.Writer
	in          io.Reader
	tty         bool
}

func stdDLQIO() dlqIO {
	return dlqIO{out: os.Stdout, errOut: os.Stderr, in: os.Stdin, tty: cmdutil.IsTerminal(os.Stderr)}
}

// dlqFlags are the filters every dlq subcommand shares.
type dlqFlags struct {
	url                               *string
	stage, failure, tool, callID, seq *string
	since, until                      *string
	limit                             *int
}

func addDLQFlags(fs *flag.FlagSet) dlqFlags {
	return dlqFlags{
		url:     cmdutil.NATSFlag(fs),
		stage:   fs.String("stage", "", "only dead letters of the stage that failed them ("+strings.Join(streams.Names(), ", ")+")"),
		failure: fs.String("failure", "", "only this failure class (schema_invalid, truncated, ...)"),
		tool:    fs.String("tool", "", "only calls of this tool"),
		callID:  fs.String("call", "", "only this call id"),
		seq:     fs.String("seq", "", "only these stream sequences, comma-separated"),
		since:   fs.String("since", "", "stored within this long (2h) or after this time (RFC 3339)"),
		until:   fs.String("until", "", "stored more than this long ago (1h) or before this time (RFC 3339)"),
		limit:   fs.Int("limit", 0, "at most this many letters, the oldest first (0: all)"),
	}
}

// dlqFlagSet is a flag set of `toolgate dlq sub` whose --help prints the
// dlq usage and its own flags.
func dlqFlagSet(sub string) *flag.FlagSet {
	fs := flag.NewFlagSet("dlq "+sub, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage:\n%s\n\nFlags of dlq %s:\n", indent(dlqUsage), sub)
		fs.PrintDefaults()
	}
	return fs
}

// check refuses what can match nothing before connecting: an unknown stage
// and a negative limit.
func (d dlqFlags) check() error {
	if *d.stage != "" && !streams.IsStage(*d.stage) {
		return cmdutil.UsageError("dlq: --stage %q is not a stage; stages: %s", *d.stage, strings.Join(streams.Names(), ", "))
	}
	if *d.limit < 0 {
		return cmdutil.UsageError("dlq: --limit %d: want a count, 0 for all", *d.limit)
	}
	return nil
}

// filter turns the flags into a dlq.Filter and the set of sequences asked
// for (nil: any).
func (d dlqFlags) filter(now time.Time) (dlq.Filter, map[uint64]bool, error) {
	f := dlq.Filter{Stage: *d.stage, Failure: *d.failure, Tool: *d.tool, CallID: *d.callID}
	var err error
	if f.Since, err = When(*d.since, now); err != nil {
		return f, nil, cmdutil.UsageError("--since: %v", err)
	}
	if f.Until, err = When(*d.until, now); err != nil {
		return f, nil, cmdutil.UsageError("--until: %v", err)
	}
	if *d.seq == "" {
		return f, nil, nil
	}
	seqs := map[uint64]bool{}
	for _, s := range strings.Split(*d.seq, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return f, nil, cmdutil.UsageError("--seq: %q is not a stream sequence (see `toolgate dlq ls`)", s)
		}
		seqs[n] = true
	}
	return f, seqs, nil
}

// When reads "2h" as that long before now, or an RFC 3339 time.
func When(s string, now time.Time) (time.Time, error) {
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

func DLQCmd(args []string) error { return dlqRun(stdDLQIO(), args) }

func dlqRun(dio dlqIO, args []string) error {
	if len(args) == 0 {
		return cmdutil.UsageError("dlq: want ls, show, replay or purge\n%s", dlqUsage)
	}
	switch args[0] {
	case "ls":
		return dlqList(dio, args[1:])
	case "show":
		return dlqShow(dio, args[1:])
	case "replay":
		return dlqReplay(dio, args[1:])
	case "purge":
		return dlqPurge(dio, args[1:])
	}
	if a := args[0]; a == "-h" || a == "--help" || a == "-help" {
		fmt.Fprintln(dio.out, "Usage:\n"+indent(dlqUsage))
		return nil
	}
	return cmdutil.UsageError("dlq: unknown subcommand %q\n%s", args[0], dlqUsage)
}

// failureClasses are the failure classes a dead letter may have: every
// failure status, and the codes of letters stored now (stage codes such as
// max_deliver or unknown_provider).
func failureClasses(ctx context.Context, js jetstream.JetStream) (known, stored []string, err error) {
	for _, s := range call.Statuses() {
		if s.Terminal() && !s.OK() {
			known = append(known, string(s))
		}
	}
	st, err := js.Stream(ctx, streams.StreamDLQ)
	if err != nil {
		return nil, nil, cmdutil.ExplainNATS(err, "dead letters")
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(streams.DLQ("*", "*")))
	if err != nil {
		return nil, nil, cmdutil.ExplainNATS(err, "dead letters")
	}
	for subj := range info.State.Subjects {
		if tok := strings.Split(subj, "."); len(tok) == 4 && !slices.Contains(stored, tok[3]) {
			stored = append(stored, tok[3])
		}
	}
	slices.Sort(known)
	slices.Sort(stored)
	return known, stored, nil
}

// checkFailure refuses a --failure that is neither a failure class nor
// the class of a letter stored now: it would match nothing.
func checkFailure(ctx context.Context, js jetstream.JetStream, failure string) error {
	if failure == "" {
		return nil
	}
	known, stored, err := failureClasses(ctx, js)
	if err != nil {
		return err
	}
	if slices.Contains(known, failure) || slices.Contains(stored, failure) {
		return nil
	}
	now := "none"
	if len(stored) > 0 {
		now = strings.Join(stored, ", ")
	}
	return cmdutil.UsageError("dlq: --failure %q is not a failure class; classes: %s; classes of the letters stored now: %s", failure, strings.Join(known, ", "), now)
}

// selected is what the flags select: the letters, oldest first, and the
// fate of each.
type selected struct {
	letters []dlq.Letter
	fates   map[uint64]dlq.Fate
}

// selectLetters lists the dead letters the flags select, with their fates.
func selectLetters(ctx context.Context, d dlqFlags, js jetstream.JetStream) (selected, error) {
	f, seqs, err := d.filter(time.Now())
	if err != nil {
		return selected{}, err
	}
	if err := checkFailure(ctx, js, f.Failure); err != nil {
		return selected{}, err
	}
	all, err := dlq.List(ctx, js, f)
	if err != nil {
		return selected{}, cmdutil.ExplainNATS(err, "dead letters")
	}
	var out []dlq.Letter
	for _, l := range all {
		if seqs == nil || seqs[l.Seq] {
			out = append(out, l)
		}
	}
	fates, err := dlq.Fates(ctx, js, out)
	if err != nil {
		return selected{}, cmdutil.ExplainNATS(err, "status records")
	}
	return selected{letters: out, fates: fates}, nil
}

// firstN is the first n letters (n <= 0: all), and how many it left out.
func firstN(ls []dlq.Letter, n int) ([]dlq.Letter, int) {
	if n <= 0 || len(ls) <= n {
		return ls, 0
	}
	return ls[:n], len(ls) - n
}

// openLetters is how dlq ls and purge begin: args parsed into fs (filters
// are flags; an operand is a usage error, told with unexpected), d checked,
// a connection as the admin and the letters d selects. done closes the
// connection and the deadline ctx runs to.
func openLetters(fs *flag.FlagSet, d dlqFlags, args []string, unexpected string) (ctx context.Context, js jetstream.JetStream, sel selected, done func(), err error) {
	operands, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return nil, nil, selected{}, nil, err
	}
	if len(operands) > 0 {
		return nil, nil, selected{}, nil, cmdutil.UsageError(unexpected, operands[0])
	}
	if err := d.check(); err != nil {
		return nil, nil, selected{}, nil, err
	}
	nc, js, err := cmdutil.Connect(*d.url)
	if err != nil {
		return nil, nil, selected{}, nil, err
	}
	ctx, cancel := cmdutil.Timeout()
	done = func() { cancel(); nc.Close() }
	if sel, err = selectLetters(ctx, d, js); err != nil {
		done()
		return nil, nil, selected{}, nil, err
	}
	return ctx, js, sel, done, nil
}
