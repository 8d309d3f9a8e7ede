package publish

import (
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/pipeline"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// describeWait says what the call callID waits for, and what ends the wait,
// relative to now: "waiting for an executor: no executor listens on
// toolgate.exec.X — attempt 3 of 10, next in 4s".
func describeWait(w pipeline.Wait, callID string, now time.Time) string {
	var b strings.Builder
	switch w.For {
	case pipeline.WaitExecutor:
		b.WriteString("waiting for an executor")
	case pipeline.WaitApproval:
		b.WriteString("waiting for approval")
		if len(w.By) > 0 {
			b.WriteString(" by " + strings.Join(w.By, " or "))
		}
		if !w.Until.IsZero() {
			if now.Before(w.Until) {
				fmt.Fprintf(&b, " until %s (expires in %s)", clock(w.Until), ago(w.Until, now))
			} else {
				fmt.Fprintf(&b, " until %s (expired %s ago; the policy stage ends it as approval_expired)", clock(w.Until), ago(now, w.Until))
			}
		}
	case pipeline.WaitRetry:
		b.WriteString("waiting to retry")
	default:
		b.WriteString("waiting for " + w.For)
	}
	if w.Detail != "" {
		b.WriteString(": " + foldLine(w.Detail))
	}
	if w.Attempt > 0 {
		fmt.Fprintf(&b, " — attempt %d", w.Attempt)
		if w.Of > 0 {
			fmt.Fprintf(&b, " of %d", w.Of)
		}
	}
	if !w.Next.IsZero() {
		sep := ", "
		if w.Attempt == 0 {
			sep = " — "
		}
		if now.Before(w.Next) {
			fmt.Fprintf(&b, "%snext in %s", sep, ago(w.Next, now))
		} else {
			fmt.Fprintf(&b, "%snext attempt due (%s ago)", sep, ago(now, w.Next))
		}
	}
	if w.For == pipeline.WaitApproval && (w.Until.IsZero() || now.Before(w.Until)) {
		fmt.Fprintf(&b, ": toolgate approve %s --by NAME (or toolgate deny %s --by NAME)", callID, callID)
	}
	if !w.Since.IsZero() {
		fmt.Fprintf(&b, " [since %s, %s ago", clock(w.Since), ago(now, w.Since))
		if w.Stage != "" {
			b.WriteString(", at " + w.Stage)
		}
		b.WriteString("]")
	}
	return b.String()
}

// clock is t in local time with milliseconds, and the date when it is not
// today's.
func clock(t time.Time) string {
	t = t.Local()
	if y, m, d := t.Date(); y != time.Now().Year() || m != time.Now().Month() || d != time.Now().Day() {
		return t.Format("2006-01-02 15:04:05.000")
	}
	return t.Format("15:04:05.000")
}

// ago is how long from since to now, rounded for reading: 450ms, 4s, 12m,
// 3h5m; never negative.
func ago(now, since time.Time) string {
	d := max(now.Sub(since), 0)
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Round(time.Minute)/time.Minute))
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// foldLine folds s onto one line, its control characters escaped: a detail
// may quote what a producer sent.
func foldLine(s string) string { return cmdutil.Printable(strings.Join(strings.Fields(s), " ")) }
