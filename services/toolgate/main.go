// Command toolgate is the one operator binary: up (every stage in one
// process over an embedded NATS server), tools, publish, status, streams and
// probe. Configuration by flags and TOOLGATE_* environment variables.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/stage"
)

// command is one subcommand: its name, the usage line of each of its forms
// (after "toolgate "), and its implementation.
type command struct {
	name  string
	usage []string
	run   func(args []string) error
}

// commands is the one table of subcommands, in the order usage lists them;
// each implementation lives in its own file.
func commands() []command {
	return []command{
		{"up", []string{"up [--listen 127.0.0.1:4222] [--data DIR] [--tools FILE] [--http 127.0.0.1:8080] [--secrets DIR] [--executor-groups G=T,T;G=T] [--tenants A,B] [--approval-ttl 15m] [--ingest-http 127.0.0.1:8090] [--insecure]"}, up},
		{"tools", toolsUsage(), tools},
		{"publish", []string{"publish [FILE|-] [--provider P] [--response-id ID] [--wait 5s] [--tenant T] [--token JWT] [--model M] [--atomic] [--end REASON]   (a body or a transcript, provider detected; exit 0 all ok, 3 some not ok, 4 still waiting, 5 duplicate or conflict)"}, publish},
		{"status", []string{"status CALL-ID|RESPONSE-ID [--json]   (where it is, what it waits for, its result and tool-result message)", "status [--json]   (the overview: each executor group's concurrency in use, queue and circuit)"}, status},
		{"results", []string{"results RESPONSE-ID [--follow [--timeout 1m]] [--json]   (exit 0 all ok, 3 some not ok, 4 nothing yet or still waiting)"}, results},
		{"calls", []string{"calls ls [--response ID] [--status S] [--stage S] [--tool T] [--since 1h] [--limit N]"}, calls},
		{"dlq", []string{
			"dlq ls [--stage S] [--failure F] [--tool T] [--call ID] [--seq N,M] [--since 2h] [--until 1h] [--limit N] [--all]",
			"dlq show SEQ [--json]",
			"dlq replay [--stage S] [--failure F] [--tool T] [--call ID] [--seq N,M] [--since 2h] [--until 1h] [--limit N] [--to-stage S] [--dry-run] [--wait 1m]",
			"dlq purge [--stage S] [--failure F] [--tool T] [--call ID] [--seq N,M] [--since 2h] [--until 1h] [--limit N] [--yes]",
		}, dlqCmd},
		{"console", []string{"console [--listen 127.0.0.1:8095] [--nats URL] [--tokens FILE]   (the operator console in a browser; up serves it on --http under /console/)"}, consoleCmd},
		{"limits", []string{"limits ls   (every limit of the registered tools)", "limits show NAME [--key K] [--redis URL]   (its definition and one key's usage in the window)"}, limitsCmd},
		{"approvals", []string{"approvals ls [--all]   (calls waiting for a decision, with the time left before each expires)", "approvals show CALL-ID"}, approvals},
		{"approve", []string{"approve CALL-ID --by NAME [--reason TEXT] [--hash HASH]   (before the approval expires: 15 minutes by default, up --approval-ttl)"}, approve},
		{"deny", []string{"deny CALL-ID --by NAME [--reason TEXT]"}, deny},
		{"streams", []string{"streams apply [--replicas N]"}, streamsCmd},
		{"authz", []string{"authz render [--executor-groups G=T,T;G=T] [--tenants A,B]   (the NATS users of deploy/; up runs them)"}, authzCmd},
		{"secrets", []string{"secrets init [--executor-groups G=T,T;G=T] [--tenants A,B] DIR   (passwords and keys for deploy/ and compose)"}, secretsCmd},
		{"probe", []string{"probe [--timeout 3s] URL   (exit 0 when URL answers 200: the container healthcheck)"}, probe},
		{"chaos", []string{
			"chaos [--n 5000] [--rate 100] [--kill-every 2s] [--topology single|cluster] [--bin DIR] [--nats-server PATH] [--executor-down 30s] [--rss-every 5s] [--rss-after 1m] [--keep]",
			"chaos --soak 10m [--rate 50] [--topology single|cluster] [--bin DIR] [--rss-every 5s] [--rss-after 1m]",
			"chaos --hostile [--duration 10s] [--rate 50] [--mem-cap 4GiB] [--inputs a,b] [--rss-after 1m] [--keep]",
		}, chaosCmd},
		{"bench", []string{"bench [--n 20000] [--size 1024] [--half 10s] [--rate 0] [--scenarios all|none|LIST] [--json FILE] [--tools FILE] [--redis URL] [--cpuprofile FILE] [--hop-encoding binary|json]"}, benchCmd},
		{"version", []string{"version   (also --version: the module version and VCS revision)"}, versionCmd},
		{"help", []string{"help [COMMAND [SUBCOMMAND]]   (also COMMAND --help)"}, helpCmd},
	}
}

// usage is the help text, its command lines from commands().
func usage() string {
	var b strings.Builder
	b.WriteString("toolgate — tool calls as untrusted proposals\n\nUsage:\n")
	for _, c := range commands() {
		for _, u := range c.usage {
			b.WriteString("  toolgate " + u + "\n")
		}
	}
	b.WriteString(`
Every command prints its own flags with --help and exits 0.

Environment: TOOLGATE_NATS_URL (default nats://127.0.0.1:4222); TOOLGATE_SECRETS
(toolgate up's secrets directory, default .toolgate/secrets: the CLI reads the
admin's password there, nats-admin.password) or TOOLGATE_NATS_USER and
TOOLGATE_NATS_PASSWORD; TOOLGATE_REDIS_URL (idempotency keys; empty: a JetStream
key-value bucket), TOOLGATE_HTTP_ADDR, TOOLGATE_LOG_LEVEL, TOOLGATE_DATA,
TOOLGATE_APPROVAL_TTL.
`)
	return b.String()
}

// lookup finds the command called name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func main() { os.Exit(dispatch(os.Args[1:])) }

// dispatch runs a command line (without the program name) and returns the
// exit code: help and version here (help.go), the rest by commands().
func dispatch(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage())
		return 2
	}
	name, rest := args[0], args[1:]
	switch {
	case name == "--version" || name == "-version":
		return exitCode(versionCmd(rest))
	case isHelpFlag(name) || (name == "help" && len(rest) == 0):
		fmt.Print(usage())
		return 0
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprint(os.Stderr, unknownCommand(name)) // nearest.go
		return 2
	}
	if subs := c.subcommands(); len(subs) > 0 {
		// A command of subcommands has no flags of its own: its help is
		// its usage lines; without a subcommand it is a usage error.
		switch {
		case len(rest) == 1 && isHelpFlag(rest[0]):
			fmt.Print(c.help())
			return 0
		case len(rest) == 0:
			fmt.Fprintf(os.Stderr, "toolgate %s: want a subcommand (%s)\n\n%s", c.name, strings.Join(subs, ", "), c.help())
			return 2
		}
	}
	return exitCode(c.run(rest))
}

// exitCode is the process exit code of a command's error: 0 for none or a
// help request, 2 for a bad command line (errUsage), a command's own code
// (exitError, e.g. publish's), else 1. It prints the error.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "toolgate:", ee.err)
		}
		return ee.code
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "toolgate:", err)
		return 2
	}
	fmt.Fprintln(os.Stderr, "toolgate:", err)
	return 1
}

// env is the TOOLGATE_* variable k, or def when it is unset or empty.
func env(k, def string) string { return stage.EnvOr(os.Getenv, k, def) }

// envInt is the number in k, or def when k is unset or not a number.
func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return n
	}
	return def
}
