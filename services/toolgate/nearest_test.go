package main

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// Before, `toolgate stauts x` printed the whole 39-line usage after one
// line naming the slip. Now it suggests the nearest command and prints
// nothing else; a word near none lists the commands on one line.
func TestUnknownCommand_suggests_the_nearest_instead_of_the_usage(t *testing.T) {
	for _, test := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts", "x"}, `toolgate: unknown command "stauts": did you mean "status"? (toolgate help lists every command)`},
		{[]string{"tool", "ls"}, `did you mean "tools"?`},
		{[]string{"Publsh"}, `did you mean "publish"?`},
		{[]string{"aprove", "c-0"}, `did you mean "approve"?`},
		{[]string{"frobnicate"}, `toolgate: unknown command "frobnicate"; the commands are up, tools, publish, status`},
	} {
		out, code := clitest.RunMain(t, nil, test.args...)
		if code != 2 || !strings.Contains(out, test.want) {
			t.Errorf("toolgate %s: exit %d, want 2 and %q:\n%s", strings.Join(test.args, " "), code, test.want, out)
		}
		if n := strings.Count(strings.TrimSpace(out), "\n") + 1; n != 1 {
			t.Errorf("toolgate %s: %d lines, want 1:\n%s", strings.Join(test.args, " "), n, out)
		}
	}
	if got := nearest("up", []string{"up", "status"}); got != "up" {
		t.Errorf("nearest(up) = %q", got)
	}
	if got := nearest("xy", []string{"up"}); got != "" {
		t.Errorf("nearest(xy) = %q, want none: two edits are too many for a short word", got)
	}
}
