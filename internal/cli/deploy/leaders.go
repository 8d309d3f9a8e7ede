package deploy

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/streams"
)

// streamsLeaders is `toolgate streams leaders`: each of toolgate's streams
// with its leader and followers, and with --spread toolgate's streams'
// leaders moved over the nodes first (after a node restart the survivors
// lead everything). As the admin: no other user may step a leader down.
func streamsLeaders(args []string) error {
	fs := cmdutil.WithUsage(flag.NewFlagSet("streams leaders", flag.ContinueOnError), "streams", "leaders")
	url := cmdutil.NATSFlag(fs)
	spread := fs.Bool("spread", false, "first move toolgate's streams' leaders over the cluster's nodes (as streams apply does): each gate stage's partitions led by different nodes, then the other streams and buckets; only streams led elsewhere are moved, and each step-down pauses that stream's publishes for a moment")
	asJSON := fs.Bool("json", false, "print the streams as JSON")
	ops, err := cmdutil.ParseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return cmdutil.UsageError("streams leaders takes no operands (got %q)", ops[0])
	}
	nc, js, err := cmdutil.Connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	if *spread {
		if err := spreadLeaders(context.Background(), js, *asJSON); err != nil {
			return err
		}
	}
	ctx, cancel := cmdutil.Timeout()
	defer cancel()
	ls, err := streams.StreamLeaders(ctx, js)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ls)
	}
	return printLeaders(os.Stdout, ls)
}

// spreadLeaders moves toolgate's streams' leaders (streams.SpreadLeaders) and
// prints a line per stream moved or left elsewhere (to stderr when quiet:
// stdout is JSON then). On one server it prints nothing.
func spreadLeaders(parent context.Context, js jetstream.JetStream, quiet bool) error {
	ctx, cancel := context.WithTimeout(parent, streams.SpreadTimeout)
	defer cancel()
	moves, err := streams.SpreadLeaders(ctx, js)
	w := io.Writer(os.Stdout)
	if quiet {
		w = os.Stderr
	}
	for _, m := range moves {
		if m.Moved() || m.Err != "" {
			fmt.Fprintln(w, m)
		}
	}
	if len(moves) > 0 {
		_, astray := streams.Tally(moves)
		fmt.Fprintf(w, "leaders of %d streams placed over the nodes, %d not where planned\n", len(moves), len(astray))
	}
	return err
}

// printLeaders writes the streams as a table.
func printLeaders(w io.Writer, ls []streams.StreamLeader) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STREAM\tLEADER\tPLANNED\tFOLLOWERS")
	led := 0
	for _, l := range ls {
		if l.Leader != "" {
			led++
		}
		var peers []string
		for _, r := range l.Replicas {
			state := "current"
			if !r.Current {
				state = fmt.Sprintf("behind %d", r.Lag)
			}
			peers = append(peers, r.Name+" ("+state+")")
		}
		planned := l.Want
		switch {
		case planned == "":
			planned = "-"
		case planned != l.Leader:
			planned += " (not yet: streams leaders --spread)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Stream, orDash(l.Leader), planned, orDash(strings.Join(peers, ", ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if led == 0 && len(ls) > 0 {
		fmt.Fprintln(w, "\nno stream has a cluster leader: one server (not clustered), nothing to place")
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
