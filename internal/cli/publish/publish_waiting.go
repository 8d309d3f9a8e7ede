package publish

import (
	"fmt"
	"time"

	"github.com/toolgate/toolgate/pkg/wire"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// waitingLines says which calls toolgate announced as waiting (the notices
// on the response's progress subject, which a producer's user may read):
// "call X (tool) waits for approval until T (in D)", and how an operator
// decides on it.
func waitingLines(notices []wire.Waiting, now time.Time) []string {
	var lines []string
	for _, n := range notices {
		line := fmt.Sprintf("  call %s (%s) waits for %s", n.CallID, n.Tool, n.For)
		switch {
		case n.Until.IsZero():
		case now.Before(n.Until):
			line += fmt.Sprintf(" until %s (in %s)", n.Until.Local().Format(time.DateTime), n.Until.Sub(now).Round(time.Second))
		default:
			line += fmt.Sprintf(" until %s (expired: it ends approval_expired)", n.Until.Local().Format(time.DateTime))
		}
		if !n.Since.IsZero() {
			line += ", since " + n.Since.Local().Format(time.TimeOnly)
		}
		lines = append(lines, cmdutil.Printable(line))
		if n.For == wire.WaitingForApproval {
			lines = append(lines, cmdutil.Printable(fmt.Sprintf("      an operator sees it with `toolgate approvals show %s` and decides with `toolgate approve %s --by NAME` (or `toolgate deny %s --by NAME`)", n.CallID, n.CallID, n.CallID)))
		}
	}
	return lines
}
