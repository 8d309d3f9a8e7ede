package main

import (
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/cli/run"
)

var usageFlag = regexp.MustCompile(`--[a-z][a-z-]*`)

// formOf is the part of usage line u that is the form of sub ("" for the
// whole line), without its comment ("   (…)"): "dlq ls|show SEQ|purge
// [--stage S]" is "show SEQ" for show.
func formOf(name, sub, u string) string {
	u, _, _ = strings.Cut(u, "   (")
	if sub == "" {
		return u
	}
	for _, alt := range strings.Split(strings.TrimPrefix(u, name), "|") {
		words := strings.Fields(alt)
		if len(words) > 0 && words[0] == name {
			words = words[1:]
		}
		if len(words) > 0 && words[0] == sub {
			return strings.Join(words, " ")
		}
	}
	return u
}

// Before, approve --help printed "-hash toolgate approvals ls" (a mangled
// placeholder), authz --help and probe --help printed errors with exit 1,
// and nothing checked that a usage line's flags exist.
func TestHelp_every_command_and_subcommand_exits_0_and_shows_its_flags(t *testing.T) {
	for _, c := range commands() {
		lines := map[string][]string{"": c.usage} // "" is the command itself
		for _, sub := range c.subcommands() {
			lines[sub] = usageLines(c.name, sub)
		}
		for sub, usage := range lines {
			args := []string{c.name, "--help"}
			if sub != "" {
				args = []string{c.name, sub, "--help"}
			}
			t.Run(strings.Join(args[:len(args)-1], "_"), func(t *testing.T) {
				out, code := clitest.RunMain(t, nil, args...)
				if code != 0 {
					t.Fatalf("toolgate %s: exit %d, want 0:\n%s", strings.Join(args, " "), code, out)
				}
				if !strings.Contains(out, "Usage") {
					t.Errorf("toolgate %s prints no usage:\n%s", strings.Join(args, " "), out)
				}
				if sub == "" && len(c.subcommands()) > 0 {
					return // the list of forms; each form's flags are its own test
				}
				for _, u := range usage {
					for _, f := range usageFlag.FindAllString(formOf(c.name, sub, u), -1) {
						if !strings.Contains(out, "  -"+f[2:]+" ") && !strings.Contains(out, "  -"+f[2:]+"\n") {
							t.Errorf("toolgate %s: usage line %q names %s, which --help does not list:\n%s", strings.Join(args, " "), u, f, out)
						}
					}
				}
				if strings.Contains(out, "-hash toolgate") {
					t.Errorf("mangled placeholder:\n%s", out)
				}
			})
		}
	}
}

func TestHelp_top_level_lists_every_command_and_exits_0(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		out, code := clitest.RunMain(t, nil, args...)
		if code != 0 {
			t.Fatalf("toolgate %v: exit %d", args, code)
		}
		for _, c := range commands() {
			if !strings.Contains(out, "\n  toolgate "+c.name) {
				t.Errorf("toolgate %v does not list %s", args, c.name)
			}
		}
	}
	if out, code := clitest.RunMain(t, nil, "help", "approve"); code != 0 || !strings.Contains(out, "-by") {
		t.Errorf("toolgate help approve: exit %d:\n%s", code, out)
	}
	if _, code := clitest.RunMain(t, nil); code != 2 {
		t.Errorf("toolgate without a command: exit %d, want 2", code)
	}
	if out, code := clitest.RunMain(t, nil, "tools"); code != 2 || !strings.Contains(out, "tools apply") {
		t.Errorf("toolgate tools without a subcommand: exit %d, want 2 and its forms:\n%s", code, out)
	}
}

// Before, up's usage line said --http :8080 while up listened on
// 127.0.0.1:8080: every value a usage line gives up's flag (not an
// upper-case placeholder) is that flag's default.
func TestUp_usage_line_shows_the_real_defaults(t *testing.T) {
	c, _ := lookup("up")
	fs := run.NewUpFlags(func(string) string { return "" }).FS
	pair := regexp.MustCompile(`\[--([a-z-]+) ([^\]]+)\]`)
	placeholder := regexp.MustCompile(`^[A-Z][A-Z=,;_-]*$`)
	n := 0
	for _, m := range pair.FindAllStringSubmatch(c.usage[0], -1) {
		if placeholder.MatchString(m[2]) {
			continue // DIR, FILE, G=T,T;G=T
		}
		f := fs.Lookup(m[1])
		if f == nil {
			t.Errorf("up has no --%s", m[1])
			continue
		}
		if n++; f.DefValue != m[2] {
			t.Errorf("usage says --%s %s, the default is %q", m[1], m[2], f.DefValue)
		}
	}
	if n < 3 {
		t.Fatalf("checked %d defaults in %q, want --listen, --http and --approval-ttl", n, c.usage[0])
	}
}

// Before, there was no --version.
func TestVersion_prints_module_version_and_revision(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, code := clitest.RunMain(t, nil, args...)
		if code != 0 || !strings.HasPrefix(out, "toolgate ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("toolgate %v: exit %d: %q", args, code, out)
		}
	}
}

// A | inside [brackets] separates a flag's values, not subcommands: bench's
// usage line names --scenarios all|none|LIST, and `toolgate bench` with no
// arguments refused to run ("want a subcommand (none)").
func TestSubcommands_alternatives_inside_brackets_are_a_flag_s_values(t *testing.T) {
	for _, c := range commands() {
		switch c.name {
		case "bench", "up", "publish", "status":
			if subs := c.subcommands(); len(subs) > 0 {
				t.Errorf("%s: subcommands %v read from its usage %q", c.name, subs, c.usage)
			}
		case "dlq":
			if subs := c.subcommands(); strings.Join(subs, " ") != "ls show replay purge" {
				t.Errorf("dlq: subcommands %v", subs)
			}
		}
	}
	if subs := (command{name: "x", usage: []string{"x [--mode a|b] FILE"}}).subcommands(); len(subs) > 0 {
		t.Errorf("subcommands %v", subs)
	}
}
