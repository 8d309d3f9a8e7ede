package tools

import (
	"errors"
	"fmt"
	"io"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/tool"
)

// coverApplied asks the toolgate up the tools were applied to which
// executor group serves each NATS-executed tool of defs; up makes or
// extends a group for one that none lists and reloads its users, so the
// tool's executor connects at once (up_groups.go). It prints the group,
// user and password file of each tool added or changed. live is false when no toolgate up answers (a
// deployment's own nats-server, or up --insecure): then the groups are the
// deployment's, checked only with --executor-groups. An error means the
// tools are stored but some has no executor that may serve it: apply
// fails, saying what to run.
func coverApplied(nc *nats.Conn, defs []tool.Definition, changes []registry.Change, w io.Writer) (live bool, err error) {
	var names []string
	for _, d := range defs {
		if d.Executor.Type != "http" && d.Executor.Type != "mcp" {
			names = append(names, d.Name)
		}
	}
	if len(names) == 0 {
		return false, nil
	}
	cs, err := requestCover(nc, names)
	if errors.Is(err, errNoLiveGroups) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("tools apply: the tools are stored, but toolgate up made no executor group serve them (%v): their calls cannot run; restart toolgate up with every tool in a group (--executor-groups 'GROUP=TOOL,TOOL', TOOLGATE_EXECUTOR_GROUPS) and apply again", err)
	}
	touched := map[string]bool{}
	for _, c := range changes {
		touched[c.Name] = c.Action == registry.Added || c.Action == registry.Changed
	}
	for _, c := range cs {
		switch {
		case c.Skipped != "" || !touched[c.Tool]:
		case c.Created:
			fmt.Fprintf(w, "executor group %s created for tool %s: its executor connects as NATS user %s (password in %s) and names its toolserver %q; no restart\n", c.Group, c.Tool, c.User, c.PasswordFile, c.Group)
		case c.Extended:
			fmt.Fprintf(w, "executor group %s now serves tool %s too: its executor connects as NATS user %s (password in %s); no restart\n", c.Group, c.Tool, c.User, c.PasswordFile)
		default:
			fmt.Fprintf(w, "tool %s is served by executor group %s (NATS user %s)\n", c.Tool, c.Group, c.User)
		}
	}
	return true, nil
}
