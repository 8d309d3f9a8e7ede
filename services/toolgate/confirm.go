package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
)

// confirm shows the pending record r (tool, caller, why, the arguments as
// stored, pretty-printed, and their full hash) and asks "approve? [y/N]".
// Only y or yes approves; anything else, or no answer, does not. What the
// call carries is hostile: control characters are shown escaped, so no
// argument can redraw the terminal.
func (c console) confirm(r approval.Record) (bool, error) {
	e, err := call.Unmarshal(r.Envelope)
	if err != nil {
		return false, fmt.Errorf("the waiting call of %s cannot be read (%w); deny it", r.CallID, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "call       %s\ntool       %s\nwhy        %s\ncaller     %s (roles %s, tenant %s, identity %s)\nrequested  %s\nexpires    %s\narguments\n%s\nargs hash  %s\n",
		r.CallID, r.Tool, r.Why, orNone(e.Request.Principal), orNone(strings.Join(e.Request.Roles, ",")), orNone(e.Request.Tenant), pipeline.IdentityOf(e),
		r.RequestedAt.Local().Format(time.DateTime), expiry(r, time.Now()), prettyArgs(e.Arguments), r.ArgsHash)
	b.WriteString(ttlNote(r) + "\n")
	if _, err := io.WriteString(c.out, printable(b.String())+"approve? [y/N] "); err != nil {
		return false, err
	}
	line, err := bufio.NewReader(io.LimitReader(c.in, 64)).ReadString('\n')
	if err != nil && line == "" {
		return false, nil // no answer is no
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// prettyArgs is the arguments indented, exactly as stored otherwise (not
// JSON: quoted).
func prettyArgs(args json.RawMessage) string {
	var out bytes.Buffer
	if err := json.Indent(&out, args, "", "  "); err != nil {
		return fmt.Sprintf("%q", args)
	}
	return out.String()
}

// printable escapes every control or unprintable character but newline and
// tab (tabwriter's columns), so text from a call (a call id, a principal, a
// string argument with ESC or C1 codes) cannot move the cursor or hide what
// is shown.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\n' || r == '\t' || (unicode.IsPrint(r) && !unicode.IsControl(r)) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.String()
}
