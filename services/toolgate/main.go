// Command toolgate is the one operator binary: up (every stage in one
// process over an embedded NATS server), tools, publish, status, streams and
// probe. Configuration by flags and TOOLGATE_* environment variables.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/internal/cli/deploy"
	"github.com/toolgate/toolgate/internal/cli/operate"
	"github.com/toolgate/toolgate/internal/cli/publish"
	"github.com/toolgate/toolgate/internal/cli/run"
	"github.com/toolgate/toolgate/internal/cli/tools"
)

// command is one subcommand: its name, the usage line of each of its forms
// (after "toolgate "), and its implementation.
type command struct {
	name  string
	usage []string
	run   func(args []string) error
}

// commands is the one table of subcommands, in the order usage lists them;
// each implementation lives in its package under internal/cli, its usage
// lines in cmdutil.UsageOf (where its flag set's --help reads them).
func commands() []command {
	return []command{
		{"up", cmdutil.UsageOf("up"), run.Up},
		{"tools", tools.ToolsUsage(), tools.Tools},
		{"publish", cmdutil.UsageOf("publish"), publish.Publish},
		{"status", cmdutil.UsageOf("status"), publish.Status},
		{"results", cmdutil.UsageOf("results"), publish.Results},
		{"calls", cmdutil.UsageOf("calls"), publish.Calls},
		{"dlq", cmdutil.UsageOf("dlq"), operate.DLQCmd},
		{"console", cmdutil.UsageOf("console"), run.ConsoleCmd},
		{"limits", cmdutil.UsageOf("limits"), tools.LimitsCmd},
		{"approvals", cmdutil.UsageOf("approvals"), operate.Approvals},
		{"approve", cmdutil.UsageOf("approve"), operate.Approve},
		{"deny", cmdutil.UsageOf("deny"), operate.Deny},
		{"streams", cmdutil.UsageOf("streams"), deploy.StreamsCmd},
		{"authz", cmdutil.UsageOf("authz"), deploy.AuthzCmd},
		{"secrets", cmdutil.UsageOf("secrets"), deploy.SecretsCmd},
		{"probe", cmdutil.UsageOf("probe"), deploy.Probe},
		{"chaos", cmdutil.UsageOf("chaos"), run.ChaosCmd},
		{"bench", cmdutil.UsageOf("bench"), run.BenchCmd},
		{"version", cmdutil.UsageOf("version"), versionCmd},
		{"help", cmdutil.UsageOf("help"), helpCmd},
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
		return cmdutil.ExitCode(versionCmd(rest))
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
	return cmdutil.ExitCode(c.run(rest))
}
