package cmdutil

import (
	"flag"
	"fmt"
	"strings"
)

// UsageOf is the usage lines of the command called name (after "toolgate "),
// one per form; nil for tools, whose lines its own table of subcommands
// makes (tools.go). main's command table and each flag set's --help
// (withUsage) read them here, so the two cannot disagree.
func UsageOf(name string) []string {
	switch name {
	case "up":
		return []string{"up [--listen 127.0.0.1:4222] [--data DIR] [--tools FILE] [--http 127.0.0.1:8080] [--secrets DIR] [--executor-groups G=T,T;G=T] [--tenants A,B] [--approval-ttl 15m] [--ingest-http 127.0.0.1:8090] [--insecure]"}
	case "publish":
		return []string{"publish [FILE|-] [--provider P] [--response-id ID] [--wait 5s] [--tenant T] [--token JWT] [--model M] [--atomic] [--end REASON]   (a body or a transcript, provider detected; exit 0 all ok, 3 some not ok, 4 still waiting, 5 duplicate or conflict)"}
	case "status":
		return []string{"status CALL-ID|RESPONSE-ID [--json]   (where it is, what it waits for, its result and tool-result message)", "status [--json]   (the overview: each executor group's concurrency in use, queue and circuit)"}
	case "results":
		return []string{"results RESPONSE-ID [--follow [--timeout 1m]] [--json]   (exit 0 all ok, 3 some not ok, 4 nothing yet or still waiting)"}
	case "calls":
		return []string{"calls ls [--response ID] [--status S] [--stage S] [--tool T] [--since 1h] [--limit N]"}
	case "dlq":
		return []string{
			"dlq ls [--stage S] [--failure F] [--tool T] [--call ID] [--seq N,M] [--since 2h] [--until 1h] [--limit N] [--all]",
			"dlq show SEQ [--json]",
			"dlq replay [--stage S] [--failure F] [--tool T] [--call ID] [--seq N,M] [--since 2h] [--until 1h] [--limit N] [--to-stage S] [--dry-run] [--wait 1m]",
			"dlq purge [--stage S] [--failure F] [--tool T] [--call ID] [--seq N,M] [--since 2h] [--until 1h] [--limit N] [--yes]",
		}
	case "console":
		return []string{"console [--listen 127.0.0.1:8095] [--nats URL] [--tokens FILE]   (the operator console in a browser; up serves it on --http under /console/)"}
	case "limits":
		return []string{"limits ls   (every limit of the registered tools)", "limits show NAME [--key K] [--redis URL]   (its definition and one key's usage in the window)"}
	case "approvals":
		return []string{"approvals ls [--all]   (calls waiting for a decision, with the time left before each expires)", "approvals show CALL-ID"}
	case "approve":
		return []string{"approve CALL-ID --by NAME [--reason TEXT] [--hash HASH]   (before the approval expires: 15 minutes by default, up --approval-ttl)"}
	case "deny":
		return []string{"deny CALL-ID --by NAME [--reason TEXT]"}
	case "streams":
		return []string{
			"streams apply [--replicas N] [--lanes N] [--partitions P] [--prune] [--spread-leaders=false]",
			"streams leaders [--spread] [--json]   (each stream's leader and followers; --spread moves them over a cluster's nodes, after a node restart)",
		}
	case "authz":
		return []string{"authz render [--executor-groups G=T,T;G=T] [--tenants A,B]   (the NATS users of deploy/; up runs them)"}
	case "secrets":
		return []string{"secrets init [--executor-groups G=T,T;G=T] [--tenants A,B] DIR   (passwords and keys for deploy/ and compose)"}
	case "probe":
		return []string{"probe [--timeout 3s] URL   (exit 0 when URL answers 200: the container healthcheck)"}
	case "chaos":
		return []string{
			"chaos [--n 5000] [--rate 100] [--kill-every 2s] [--topology single|cluster] [--bin DIR] [--nats-server PATH] [--executor-down 30s] [--rss-every 5s] [--rss-after 1m] [--keep]",
			"chaos --soak 10m [--rate 50] [--topology single|cluster] [--bin DIR] [--rss-every 5s] [--rss-after 1m]",
			"chaos --hostile [--duration 10s] [--rate 50] [--mem-cap 4GiB] [--inputs a,b] [--rss-after 1m] [--keep]",
		}
	case "bench":
		return []string{"bench [--n 20000] [--size 1024] [--half 10s] [--rate 0] [--scenarios all|none|LIST] [--json FILE] [--tools FILE] [--redis URL] [--cpuprofile FILE] [--hop-encoding binary|json] [--nats embedded|embedded-process|cluster|URL]"}
	case "version":
		return []string{"version   (also --version: the module version and VCS revision)"}
	case "help":
		return []string{"help [COMMAND [SUBCOMMAND]]   (also COMMAND --help)"}
	}
	return nil
}

// FilterUsage is the lines of usage (the command called name's) that start
// with "name sub" (all of them for sub ""), for a flag set's Usage.
func FilterUsage(usage []string, name, sub string) []string {
	var out []string
	for _, u := range usage {
		if sub == "" || strings.HasPrefix(u, name+" "+sub) || strings.Contains(u, "|"+sub) || strings.Contains(u, "| "+name+" "+sub) {
			out = append(out, u)
		}
	}
	return out
}

// WithUsage makes fs's --help print the usage lines of `toolgate name sub`
// from usageOf, then fs's flags.
func WithUsage(fs *flag.FlagSet, name, sub string) *flag.FlagSet {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "Usage:")
		for _, u := range FilterUsage(UsageOf(name), name, sub) {
			fmt.Fprintln(w, "  toolgate "+u)
		}
		fmt.Fprintln(w, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}
