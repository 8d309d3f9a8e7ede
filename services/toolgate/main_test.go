package main

import (
	"strings"
	"testing"
)

func TestCommands_one_row_each_and_usage_lists_every_form(t *testing.T) {
	seen := map[string]bool{}
	help := usage()
	for _, c := range commands() {
		if seen[c.name] {
			t.Errorf("command %s is in the table twice", c.name)
		}
		seen[c.name] = true
		if c.run == nil {
			t.Errorf("command %s has no implementation", c.name)
		}
		if len(c.usage) == 0 {
			t.Errorf("command %s has no usage line", c.name)
		}
		for _, u := range c.usage {
			if !strings.HasPrefix(u, c.name) {
				t.Errorf("command %s: usage %q does not start with its name", c.name, u)
			}
			if !strings.Contains(help, "\n  toolgate "+u+"\n") {
				t.Errorf("usage() lacks %q", u)
			}
		}
		if got, ok := lookup(c.name); !ok || got.name != c.name {
			t.Errorf("lookup(%q) = %v, %v", c.name, got.name, ok)
		}
	}
	if _, ok := lookup("nope"); ok {
		t.Error("lookup found a command that is not in the table")
	}
}
