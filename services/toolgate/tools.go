package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/streams"
)

// tools: apply, ls, show.
func tools(args []string) error {
	if len(args) == 0 {
		return errors.New("tools: want apply, ls or show")
	}
	fs := flag.NewFlagSet("tools "+args[0], flag.ExitOnError)
	url := natsFlag(fs)
	file := fs.String("f", "", "tool definitions file (YAML or JSON: toolgate, OpenAI, Anthropic or MCP form)")
	prune := fs.Bool("prune", false, "delete registered tools that the file does not define")
	fs.Parse(args[1:])
	switch args[0] {
	case "apply":
		if *file == "" {
			return errors.New("tools apply: -f FILE is required")
		}
		return applyFile(*url, *file, *prune)
	case "ls", "show":
	default:
		return fmt.Errorf("tools: unknown subcommand %q (apply, ls, show)", args[0])
	}
	ctx, kv, done, err := openBucket(*url, streams.BucketTools)
	if err != nil {
		return err
	}
	defer done()
	if args[0] == "show" {
		if fs.NArg() != 1 {
			return errors.New("tools show: want one tool name")
		}
		d, rev, err := registry.Get(ctx, kv, fs.Arg(0))
		if err != nil {
			return err
		}
		out, _ := json.MarshalIndent(d, "", "  ")
		fmt.Printf("# revision %d\n%s\n", rev, out)
		return nil
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		fmt.Println("no tools registered; apply some with: toolgate tools apply -f tools.yaml")
		return nil
	}
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tREVISION\tRISK\tEXECUTOR\tDESCRIPTION")
	for _, k := range keys {
		d, rev, err := registry.Get(ctx, kv, k)
		if err != nil {
			return err
		}
		risk := "(no policy: denied)"
		if d.Policy != nil {
			risk = d.Policy.Risk
		}
		ex := d.Executor.Type
		if ex == "" {
			ex = "nats " + streams.Exec(d.Name)
		}
		desc := d.Description
		if len(desc) > 50 {
			desc = desc[:47] + "..."
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", d.Name, rev, risk, ex, desc)
	}
	return tw.Flush()
}
