package publish

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolgate/toolgate/pkg/wire"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// printResponse writes a response's story for `status RESPONSE-ID`: its
// stream, its own result, and one short block per call.
func printResponse(w io.Writer, rs responseStory, now time.Time, idle time.Duration) error {
	var b strings.Builder
	fmt.Fprintf(&b, "response  %s\n", rs.ResponseID)
	if rs.Stream != nil {
		fmt.Fprintf(&b, "stream    %s\n", rs.Stream.describe(now, idle))
	}
	if rs.Result != nil {
		writeResponseResult(&b, *rs.Result)
	}
	fmt.Fprintf(&b, "calls     %d", len(rs.Calls))
	if len(rs.Calls) > 0 {
		fmt.Fprintf(&b, " (the whole story: toolgate status %s; outcomes: toolgate results %s)", rs.Calls[0].Record.CallID, rs.ResponseID)
	}
	b.WriteString("\n")
	for _, s := range rs.Calls {
		b.WriteString("\n")
		writeCallBlock(&b, s, now, false)
	}
	_, err := io.WriteString(w, cmdutil.Printable(b.String()))
	return err
}

// writeCallBlock writes one call in a few lines: id, tool and status, where
// it is now, and with full its errors, result and tool-result message.
func writeCallBlock(b *strings.Builder, s story, now time.Time, full bool) {
	r := s.Record
	st := string(r.Status)
	if s.Result != nil {
		st = string(s.Result.Status)
		if s.Result.Failure != "" {
			st += " (" + string(s.Result.Failure) + ")"
		}
	} else if r.Failure != "" {
		st += " (" + string(r.Failure) + ")"
	}
	fmt.Fprintf(b, "%s  %s  %s\n  now       %s\n", r.CallID, r.Tool, st, whereNow(s, now))
	if !full {
		return
	}
	errs := r.Errors
	if s.Result != nil {
		errs = s.Result.Errors
	}
	for _, e := range errs {
		fmt.Fprintf(b, "  error     %s\n", foldLine(e))
	}
	if s.Result != nil {
		writeResult(b, *s.Result, "  ")
	}
}

// writeResponseResult writes the outcome of a response that yielded no call.
func writeResponseResult(b *strings.Builder, r wire.ResponseResult) {
	verdict := "not ok"
	if r.OK {
		verdict = "ok"
	}
	fmt.Fprintf(b, "result    %s, %s (the response as a whole: it yielded no call)\n", verdict, r.Status)
	for _, e := range r.Errors {
		fmt.Fprintf(b, "error     %s\n", foldLine(e))
	}
	if r.Text != "" {
		fmt.Fprintf(b, "text      %s\n", foldLine(r.Text))
	}
}
