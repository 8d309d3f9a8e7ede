package operate

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
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
		r.CallID, r.Tool, r.Why, cmdutil.OrNone(e.Request.Principal), cmdutil.OrNone(strings.Join(e.Request.Roles, ",")), cmdutil.OrNone(e.Request.Tenant), pipeline.IdentityOf(e),
		r.RequestedAt.Local().Format(time.DateTime), expiry(r, time.Now()), cmdutil.PrettyArgs(e.Arguments), r.ArgsHash)
	b.WriteString(ttlNote(r) + "\n")
	if _, err := io.WriteString(c.out, cmdutil.Printable(b.String())+"approve? [y/N] "); err != nil {
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
