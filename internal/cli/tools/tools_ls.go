package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// toolsLs lists the registered tools with what decides their calls: risk,
// approval, executor, revision, and the executor group their calls wait
// in with its concurrency and the executor's timeout (issue 38).
func toolsLs(args []string, tio ToolsIO) error {
	fs, url := toolsFlags("ls", tio)
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return cmdutil.UsageError("tools ls: takes no operands (got %q); toolgate tools show NAME shows one tool", ops[0])
	}
	ctx, kv, done, err := cmdutil.OpenBucket(*url, streams.BucketTools)
	if err != nil {
		return err
	}
	defer done()
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		fmt.Fprintln(tio.Out, "no tools registered; apply some with: toolgate tools apply -f tools.yaml")
		return nil
	}
	if err != nil {
		return err
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(tio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tREVISION\tRISK\tAPPROVAL\tEXECUTOR\tGROUP\tCONCURRENCY\tTIMEOUT\tRETRY\tDESCRIPTION")
	for _, k := range keys {
		d, rev, err := registry.Get(ctx, kv, k)
		if err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\tunreadable, not served: %s\n", redact.Clip(k), err)
			continue
		}
		risk, approval := d.PolicyColumns()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.Name, rev, risk, approval, d.Where(), d.Group(), d.Concurrency(), timeoutOf(d), retryOf(d), oneLine(d.Description, 50))
	}
	return tw.Flush()
}

// timeoutOf is the executor timeout d's calls get: its own, or the default.
func timeoutOf(d tool.Definition) string {
	if d.Executor.Timeout != "" {
		return cmdutil.Printable(d.Executor.Timeout)
	}
	return tool.DefaultTimeout.String()
}

// retryOf is d's group's retry schedule: attempts x delays, the last
// repeating; the defaults where it sets none (the deployment's MaxDeliver,
// default 10; 250ms doubling to 30s, at least 1s each).
func retryOf(d tool.Definition) string {
	attempts, delays := fmt.Sprint(streams.DefaultSettings().MaxDeliver), "doubling-to-30s"
	if n := d.RetryAttempts(); n > 0 {
		attempts = fmt.Sprint(n)
	}
	if b := d.RetryBackoff(); len(b) > 0 {
		parts := make([]string, len(b))
		for i, v := range b {
			parts[i] = v.String()
		}
		delays = strings.Join(parts, ",")
	}
	return attempts + "x:" + delays
}

// oneLine is s on one line of at most n characters, control characters
// escaped (a description is shown on an operator's terminal).
func oneLine(s string, n int) string {
	r := []rune(cmdutil.Printable(strings.Join(strings.Fields(s), " ")))
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// toolsShow prints one stored definition and its revision.
func toolsShow(args []string, tio ToolsIO) error {
	fs, url := toolsFlags("show", tio)
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) != 1 {
		return cmdutil.UsageError("tools show: want one tool name (toolgate tools ls lists them)")
	}
	ctx, kv, done, err := cmdutil.OpenBucket(*url, streams.BucketTools)
	if err != nil {
		return err
	}
	defer done()
	d, rev, err := registry.Get(ctx, kv, ops[0])
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("tools show: no tool %s is registered (toolgate tools ls lists them)", redact.Clip(ops[0]))
	}
	if err != nil {
		return err
	}
	out, _ := json.MarshalIndent(d, "", "  ")
	fmt.Fprintf(tio.Out, "# revision %d\n%s\n", rev, out)
	return nil
}
