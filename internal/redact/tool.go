package redact

import (
	"strconv"
	"strings"
)

// ToolName is how a tool name leaves the process (log lines, audit events,
// status records, message headers; metrics label all such names
// "unregistered"): a registered tool's
// name as it is; any other (a model's invention, a 70 KB name, a secret
// pasted as a name) as "unregistered:" and 12 hex digits of its sha256, so
// nothing grows with what a model wrote, one name is still recognisable
// across records, and no unknown name is shown in clear. Only the dead
// letter's body keeps the name itself, as evidence. registered nil: no name
// is registered.
func ToolName(name string, registered func(string) bool) string {
	if name == "" || (registered != nil && registered(name)) {
		return name
	}
	return "unregistered:" + strings.TrimPrefix(Hash([]byte(name)), "sha256:")[:12]
}

// minBare is the shortest unregistered name replaced where it stands bare
// in a text; a shorter one is replaced only quoted, so "x" does not garble
// every x of an error message.
const minBare = 6

// ToolNameIn replaces the unregistered tool name name in s (an error, a
// history note) by its public form, quoted (as %q writes it) or bare.
func ToolNameIn(s, name, public string) string {
	if name == "" || name == public || s == "" {
		return s
	}
	s = strings.ReplaceAll(s, strconv.Quote(name), strconv.Quote(public))
	if len(name) >= minBare {
		s = strings.ReplaceAll(s, name, public)
	}
	return s
}
