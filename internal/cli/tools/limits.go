package tools

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/limit"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// limitsCmd: limits ls and limits show NAME [--key K]. Both connect as the
// admin, as status does: the definitions are read from the tools bucket,
// the usage from the idempotency store (Redis with --redis, else the
// embedded bucket), both read only.
func LimitsCmd(args []string) error { return runLimits(os.Stdout, args) }

func runLimits(w io.Writer, args []string) error {
	if len(args) == 0 || (args[0] != "ls" && args[0] != "show") {
		return cmdutil.UsageError("limits: want ls or show NAME [--key K]")
	}
	sub := args[0]
	fs := cmdutil.WithUsage(flag.NewFlagSet("limits "+sub, flag.ContinueOnError), "limits", sub)
	url := cmdutil.NATSFlag(fs)
	var key, redisURL *string
	if sub == "show" {
		key = fs.String("key", "", "the key whose usage to show, as the limit's key expression gives it (a tenant, \"acme:c-42\"); without it, only what the limit tracks")
		redisURL = fs.String("redis", cmdutil.Env("TOOLGATE_REDIS_URL", ""), "the Redis execute keeps its records in (TOOLGATE_REDIS_URL); empty: the embedded store")
	}
	ops, err := cmdutil.ParseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	switch {
	case sub == "ls" && len(ops) != 0:
		return cmdutil.UsageError("limits ls takes no operands (got %q)", ops[0])
	case sub == "show" && len(ops) != 1:
		return cmdutil.UsageError("limits show: want one limit name")
	}
	ctx, kv, done, err := cmdutil.OpenBucket(*url, streams.BucketTools)
	if err != nil {
		return err
	}
	defer done()
	all, err := registeredLimits(ctx, kv)
	if err != nil {
		return err
	}
	if sub == "ls" {
		return printLimits(w, all)
	}
	l, ok := all[ops[0]]
	if !ok {
		return fmt.Errorf("limits: no registered tool has a limit %q (toolgate limits ls lists them)", cmdutil.Printable(ops[0]))
	}
	store, where, closeStore, err := limitStore(ctx, *url, *redisURL)
	if err != nil {
		return err
	}
	defer closeStore()
	return showLimit(ctx, w, l, store, where, *key, key != nil && *key != "" || hasFlag(args, "key"))
}

// namedLimit is one limit and the registered tools it covers.
type namedLimit struct {
	def   limit.Limit
	tools []string
}

func registeredLimits(ctx context.Context, kv jetstream.KeyValue) (map[string]*namedLimit, error) {
	keys, err := kv.Keys(ctx)
	if err != nil && err != jetstream.ErrNoKeysFound {
		return nil, err
	}
	out := map[string]*namedLimit{}
	for _, k := range keys {
		d, _, err := registry.Get(ctx, kv, k)
		if err != nil {
			continue // tools ls reports it
		}
		for _, l := range d.Limits {
			n, ok := out[l.Name]
			if !ok {
				n = &namedLimit{def: l}
				out[l.Name] = n
			}
			n.tools = append(n.tools, d.Name)
		}
	}
	return out, nil
}

func printLimits(w io.Writer, all map[string]*namedLimit) error {
	if len(all) == 0 {
		fmt.Fprintln(w, "no limits: give tools limits: in the tools file (docs/limits.md)")
		return nil
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMAXIMUM\tWINDOW\tKEY\tON EXCEED\tTOOLS")
	for _, n := range names {
		l := all[n]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n, maximum(l.def), l.def.Window, oneLine(keyExpr(l.def), 40), onExceed(l.def), strings.Join(l.tools, ","))
	}
	return tw.Flush()
}

func maximum(l limit.Limit) string {
	if l.Count > 0 {
		return fmt.Sprintf("%d calls", l.Count)
	}
	return fmt.Sprintf("%d of %s", l.Max, oneLine(l.Weight, 30))
}

func keyExpr(l limit.Limit) string {
	if strings.TrimSpace(l.Key) == "" {
		return "tenant"
	}
	return l.Key
}

func onExceed(l limit.Limit) string {
	if l.OnExceed == limit.Wait {
		return "wait up to " + l.MaxWait
	}
	return "reject"
}

// limitStore opens the store execute charges: Redis, or the embedded bucket.
func limitStore(ctx context.Context, natsURL, redisURL string) (idem.Limits, string, func(), error) {
	if redisURL != "" {
		st, err := idem.Dial(redisURL)
		if err != nil {
			return nil, "", nil, fmt.Errorf("limits: --redis: %w", err)
		}
		return st, "redis", func() { st.Close() }, nil
	}
	_, kv, done, err := cmdutil.OpenBucket(natsURL, streams.BucketIdempotency)
	if err != nil {
		return nil, "", nil, err
	}
	return idem.NewKV(kv), "embedded (" + streams.BucketIdempotency + ")", done, nil
}

func showLimit(ctx context.Context, w io.Writer, l *namedLimit, store idem.Limits, where, key string, keyGiven bool) error {
	lc, err := limit.NewCompiler()
	if err != nil {
		return err
	}
	c, err := lc.Compile(l.def)
	if err != nil {
		return fmt.Errorf("limits: %s does not compile: %w", l.def.Name, err)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "limit\t%s\n", l.def.Name)
	fmt.Fprintf(tw, "tools\t%s\n", strings.Join(l.tools, ", "))
	fmt.Fprintf(tw, "key\t%s\n", keyExpr(l.def))
	fmt.Fprintf(tw, "window\t%s, sliding\n", c.Window)
	fmt.Fprintf(tw, "maximum\t%s per key per window\n", maximum(l.def))
	fmt.Fprintf(tw, "on exceed\t%s\n", onExceed(l.def))
	fmt.Fprintf(tw, "store\t%s\n", where)
	probe := limit.Charge{Limit: l.def.Name, Key: limit.KeyOf(key), Window: c.Window, Max: c.Max}
	u, err := store.LimitUsage(ctx, probe)
	if err != nil {
		tw.Flush()
		return err
	}
	if keyGiven {
		fmt.Fprintf(tw, "key %q\tused %d of %d (%d charges in the window)\n", cmdutil.Printable(key), u.Used, c.Max, u.Charges)
		if !u.Oldest.IsZero() {
			fmt.Fprintf(tw, "\tthe oldest charge leaves the window at %s\n", u.Oldest.Add(c.Window).UTC().Format(time.RFC3339))
		}
	} else {
		fmt.Fprintln(tw, "usage\tgive --key K for one key's usage (keys are never listed: they may be made of arguments)")
	}
	if where == "redis" {
		fmt.Fprintf(tw, "keys tracked\t%d of max_keys %d\n", u.Keys, c.MaxKeys)
		fmt.Fprintf(tw, "overflow\t%d (usage of keys evicted past max_keys, counted against every key)\n", u.Overflow)
	}
	fmt.Fprintln(tw, "waiting\tcalls held by on_exceed: wait are counted in toolgate_limit_events_total{event=\"waited\"}; each is redelivered when it fits")
	return tw.Flush()
}

// hasFlag reports whether name was given in args (--key "" asks for the
// empty key, which a limit keyed by an empty tenant uses).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--"+name || a == "-"+name || strings.HasPrefix(a, "--"+name+"=") || strings.HasPrefix(a, "-"+name+"=") {
			return true
		}
	}
	return false
}
