package main

import (
	"os"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// TestCLIReference_is_fresh: docs/reference/cli.md is what `toolgate help
// --markdown` prints now, so a command, subcommand or flag added, removed
// or reworded without `make generate` fails here; and the page has a
// section with every flag of every command's --help.
func TestCLIReference_is_fresh(t *testing.T) {
	out, code := clitest.RunMain(t, []string{"TOOLGATE_TENANT=from-the-shell", "TOOLGATE_NATS_URL=nats://shell:1"}, "help", "--markdown")
	if code != 0 {
		t.Fatalf("toolgate help --markdown: exit %d:\n%s", code, out)
	}
	page, err := os.ReadFile("../../docs/reference/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(page) {
		t.Fatalf("docs/reference/cli.md is stale: run make generate")
	}
	if strings.Contains(out, "from-the-shell") || strings.Contains(out, "nats://shell:1") {
		t.Errorf("a default shown comes from this shell's TOOLGATE_* variables, not the code")
	}
	for _, c := range commands() {
		for _, title := range helpTitles(c) {
			if !strings.Contains(out, "\n## `"+title+"`\n") {
				t.Errorf("cli.md has no section for %s", title)
			}
		}
	}
	for _, want := range []string{"| `--nats string` | `\"nats://127.0.0.1:4222\"` |", "| `--wait duration` |", "| `--by string` |"} {
		if !strings.Contains(out, want) {
			t.Errorf("cli.md lacks %s", want)
		}
	}
}

// TestParseDefaults_reads_what_PrintDefaults_writes: one-letter flags on
// the head line, types, multi-line usage and quoted defaults.
func TestParseDefaults_reads_what_PrintDefaults_writes(t *testing.T) {
	out := "Usage:\n  toolgate x\n\nFlags:\n  -f\tthe file\n  -name string\n    \tthe name\n    \tsecond line (default \"a b\")\n  -n int\n    \thow many (default 3)\n  -q\tquiet\n"
	got := parseDefaults(out)
	want := []helpFlag{{"f", "", "the file", ""}, {"name", "string", "the name\nsecond line", `"a b"`}, {"n", "int", "how many", "3"}, {"q", "", "quiet", ""}}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("flag %d: got %q, want %q", i, got[i], want[i])
		}
	}
}
