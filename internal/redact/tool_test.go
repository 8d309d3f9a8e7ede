package redact

import (
	"strings"
	"testing"
)

func TestToolName_registered_as_is_anything_else_hashed(t *testing.T) {
	registered := func(n string) bool { return n == "create_invoice" }
	for _, c := range []struct{ name, want string }{
		{"create_invoice", "create_invoice"},
		{"", ""},
		{"sk_live_SECRET123", "unregistered:" + strings.TrimPrefix(Hash([]byte("sk_live_SECRET123")), "sha256:")[:12]},
		{strings.Repeat("x", 70000), "unregistered:" + strings.TrimPrefix(Hash([]byte(strings.Repeat("x", 70000))), "sha256:")[:12]},
	} {
		if got := ToolName(c.name, registered); got != c.want {
			t.Errorf("ToolName(%.20q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := ToolName("create_invoice", nil); !strings.HasPrefix(got, "unregistered:") {
		t.Errorf("without a registry a name counts as registered: %q", got)
	}
}

func TestToolNameIn_replaces_quoted_always_and_bare_when_long_enough(t *testing.T) {
	for _, c := range []struct{ s, name, want string }{
		{`there is no tool named "sk_live_SECRET123"`, "sk_live_SECRET123", `there is no tool named "H"`},
		{"tool sk_live_SECRET123 is no longer registered", "sk_live_SECRET123", "tool H is no longer registered"},
		{`there is no tool named "x"`, "x", `there is no tool named "H"`},
		{"an x in text", "x", "an x in text"},
		{`no tool named "a\nb"`, "a\nb", `no tool named "H"`},
	} {
		if got := ToolNameIn(c.s, c.name, "H"); got != c.want {
			t.Errorf("ToolNameIn(%q, %q) = %q, want %q", c.s, c.name, got, c.want)
		}
	}
}
