package tools

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// ToolsIO is where the tools subcommands read and write; tests give buffers.
type ToolsIO struct {
	In       io.Reader // `tools apply -f -`
	Out, Err io.Writer // report, warnings and help
}

// toolsSub is one tools subcommand: its usage line (after "toolgate ") and
// its implementation.
type toolsSub struct {
	name, usage string
	run         func(args []string, tio ToolsIO) error
}

func toolsSubs() []toolsSub {
	return []toolsSub{
		{"apply", "tools apply -f FILE|- [--policy FILE] [--prune] [--executor-groups G=T,T;G=T] [--what-if [--since 24h] [--tool NAME] [--json] | --shadow] | --promote", ToolsApply},
		{"ls", "tools ls", toolsLs},
		{"show", "tools show NAME", toolsShow},
		{"import", "tools import --mcp URL|COMMAND [--timeout D]", toolsImport},
		{"shadow", "tools shadow ACTION [--json]   (ACTION: report, promote or drop)", toolsShadow},
	}
}

// ToolsUsage are the usage lines of the tools command, for commands().
func ToolsUsage() []string {
	var out []string
	for _, s := range toolsSubs() {
		out = append(out, s.usage)
	}
	return out
}

// tools: apply, ls, show.
func Tools(args []string) error {
	return toolsWith(args, ToolsIO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}

func toolsWith(args []string, tio ToolsIO) error {
	names := make([]string, 0, 3)
	for _, s := range toolsSubs() {
		names = append(names, s.name)
	}
	if len(args) == 0 {
		return cmdutil.UsageError("tools: want a subcommand: %s", strings.Join(names, ", "))
	}
	if isHelpArg(args[0]) {
		fmt.Fprintln(tio.Err, "Usage:")
		for _, u := range ToolsUsage() {
			fmt.Fprintln(tio.Err, "  toolgate "+u)
		}
		fmt.Fprintln(tio.Err, "\nFlags of each: toolgate tools SUBCOMMAND --help")
		return flag.ErrHelp
	}
	for _, s := range toolsSubs() {
		if s.name == args[0] {
			return s.run(args[1:], tio)
		}
	}
	return cmdutil.UsageError("tools: unknown subcommand %q (want %s)", args[0], strings.Join(names, ", "))
}

func isHelpArg(a string) bool { return a == "-h" || a == "--help" || a == "-help" || a == "help" }

// toolsFlags is the flag set of one tools subcommand: its --help prints the
// subcommand's usage line and its own flags, and every one takes --nats.
func toolsFlags(sub string, tio ToolsIO) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("tools "+sub, flag.ContinueOnError)
	fs.SetOutput(tio.Err)
	fs.Usage = func() {
		for _, s := range toolsSubs() {
			if s.name == sub {
				fmt.Fprintf(fs.Output(), "Usage:\n  toolgate %s [--nats URL]\n\nFlags:\n", s.usage)
			}
		}
		fs.PrintDefaults()
	}
	return fs, cmdutil.NATSFlag(fs)
}
