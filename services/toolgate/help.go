package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// isHelpFlag reports whether arg asks for help the way flag does.
func isHelpFlag(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// helpCmd is `toolgate help [COMMAND [SUBCOMMAND]]`: the usage, or
// `toolgate COMMAND [SUBCOMMAND] --help`; `toolgate help --markdown` is
// docs/reference/cli.md.
func helpCmd(args []string) error {
	if len(args) == 1 && args[0] == "--markdown" { // make generate's (help_markdown.go)
		return helpMarkdown(os.Stdout)
	}
	if len(args) == 0 {
		fmt.Print(usage())
		return nil
	}
	if code := dispatch(append(append([]string(nil), args...), "--help")); code != 0 {
		return &cmdutil.ExitError{Code: code}
	}
	return nil
}

// help is c's usage lines, as `toolgate c --help` prints them.
func (c command) help() string {
	var b strings.Builder
	b.WriteString("Usage:\n")
	for _, u := range c.usage {
		b.WriteString("  toolgate " + u + "\n")
	}
	if subs := c.subcommands(); len(subs) > 0 {
		fmt.Fprintf(&b, "\nFlags of each: toolgate %s SUBCOMMAND --help\n", c.name)
	}
	return b.String()
}

var subcommandWord = regexp.MustCompile(`^[a-z][a-z-]*$`)

// outsideBrackets is u without its [optional] parts: a | inside brackets
// separates a flag's values ("[--scenarios all|none|LIST]"), not
// subcommands.
func outsideBrackets(u string) string {
	var b strings.Builder
	depth := 0
	for _, r := range u {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// subcommands are c's subcommands as its usage lines name them: the first
// word after the name of each |-separated alternative ("tools apply -f F",
// "dlq ls|show SEQ|replay|purge [filters]"); none for a command that takes
// flags and operands itself ("up [--listen …]", "status CALL-ID").
func (c command) subcommands() []string {
	var subs []string
	seen := map[string]bool{}
	for _, u := range c.usage {
		rest, _ := strings.CutPrefix(u, c.name)
		for _, alt := range strings.Split(outsideBrackets(rest), "|") {
			words := strings.Fields(alt)
			if len(words) > 0 && words[0] == c.name {
				words = words[1:]
			}
			if len(words) > 0 && subcommandWord.MatchString(words[0]) && !seen[words[0]] {
				seen[words[0]] = true
				subs = append(subs, words[0])
			}
		}
	}
	return subs
}

// usageLines are the lines of the command called name that start with
// "name sub" (all of them for sub ""), for a flag set's Usage.
func usageLines(name, sub string) []string {
	c, ok := lookup(name)
	if !ok {
		return nil
	}
	return cmdutil.FilterUsage(c.usage, name, sub)
}
