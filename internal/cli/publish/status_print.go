package publish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// printStory writes a call's story for a reader: the record, where the call
// is now and what it waits for, its result and tool-result message, and its
// history with millisecond times.
func printStory(w io.Writer, s story, now time.Time) error {
	r := s.Record
	var b strings.Builder
	fmt.Fprintf(&b, "call      %s\nresponse  %s\ntool      %s", r.CallID, r.ResponseID, r.Tool)
	if r.ToolRevision > 0 {
		fmt.Fprintf(&b, " (revision %d)", r.ToolRevision)
	}
	b.WriteString(cmdutil.UnregisteredNote(r.Tool, r.CallID)) // toolname.go
	fmt.Fprintf(&b, "\nprovider  %s %s\nsource    %s\n", r.Provider, r.Model, r.Source)
	if r.Identity != "" {
		fmt.Fprintf(&b, "identity  %s\n", r.Identity)
	}
	st := string(r.Status)
	if r.Failure != "" {
		st += " (" + string(r.Failure) + ")"
	}
	fmt.Fprintf(&b, "status    %s\nnow       %s\n", st, whereNow(s, now))
	fmt.Fprintf(&b, "repairs   %d\n", r.RepairAttempts)
	if r.Replays > 0 {
		fmt.Fprintf(&b, "replays   %d\n", r.Replays)
	}
	if r.ArgumentsHash != "" {
		fmt.Fprintf(&b, "args hash %s\n", r.ArgumentsHash)
	}
	if r.IdempotencyKey != "" {
		fmt.Fprintf(&b, "idem key  %s\n", r.IdempotencyKey)
	}
	errs := r.Errors
	if s.Result != nil && len(s.Result.Errors) > 0 {
		errs = s.Result.Errors
	}
	for _, e := range errs {
		fmt.Fprintf(&b, "error     %s\n", foldLine(e))
	}
	if s.Result != nil {
		writeResult(&b, *s.Result, "")
	}
	if _, err := io.WriteString(w, cmdutil.Printable(b.String())+"\n"); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSTAGE\tSTATUS\tNOTE")
	for _, h := range r.History {
		fmt.Fprint(tw, cmdutil.Printable(fmt.Sprintf("%s\t%s\t%s\t%s", clock(h.At), h.Stage, h.Status, foldLine(h.Note)))+"\n")
	}
	return tw.Flush()
}

// whereNow is where the call stands: ended (and at which stage), waiting
// (for what), or on its way to its next stage.
func whereNow(s story, now time.Time) string {
	r := s.Record
	if s.Result != nil && s.Result.Status.Terminal() {
		r.Status, r.Failure = s.Result.Status, s.Result.Failure
		if len(s.Result.History) > len(r.History) {
			r.History = s.Result.History
		}
	}
	switch {
	case r.Status.Terminal():
		stage, at := stageOf(r), updated(r)
		verdict := "ended ok"
		if !r.Status.OK() {
			verdict = "ended, not ok"
		}
		line := fmt.Sprintf("%s at %s, %s (%s ago)", verdict, stage, clock(at), ago(now, at))
		if s.Result == nil {
			line += "; its result is not in " + streams.StreamResults + " (aged out, or still being published)"
		}
		return line
	case s.Waiting != nil:
		return describeWait(*s.Waiting, r.CallID, now)
	}
	at, last := updated(r), ""
	if n := len(r.History); n > 0 {
		last = r.History[n-1].Stage
	}
	next := streams.Next(r.Status)
	if next == "" {
		next = "its next stage"
	}
	return fmt.Sprintf("on its way to %s: last recorded by %s at %s (%s ago), no wait recorded (a stage records the call when it enters, waits or ends)", next, last, clock(at), ago(now, at))
}

// writeResult writes a call's result, text and tool-result message, each
// line prefixed by indent.
func writeResult(b *strings.Builder, res pipeline.Result, indent string) {
	verdict := "not ok"
	if res.OK {
		verdict = "ok"
	}
	st := string(res.Status)
	if res.Failure != "" {
		st += " (" + string(res.Failure) + ")"
	}
	fmt.Fprintf(b, "%sresult    %s, %s\n", indent, verdict, st)
	if len(res.Result) > 0 {
		fmt.Fprintf(b, "%s%s\n", indent+"  ", indented(res.Result, indent+"  "))
	}
	if res.Text != "" {
		fmt.Fprintf(b, "%stext      %s\n", indent, foldLine(res.Text))
	}
	if len(res.Message) > 0 {
		fmt.Fprintf(b, "%smessage   (the tool-result message for %s: append it to the conversation)\n%s%s\n", indent, res.Provider, indent+"  ", indented(res.Message, indent+"  "))
	}
}

// indented is raw JSON indented under prefix, or the bytes as they are when
// they are not JSON.
func indented(raw json.RawMessage, prefix string) string {
	var out bytes.Buffer
	if err := json.Indent(&out, raw, prefix, "  "); err != nil {
		return string(raw)
	}
	return out.String()
}

// stageOf is the stage a record's call is at: for a failed call, where it
// failed (streams.FailedAt: parse for invalid_json, validate for
// schema_invalid), not the stage that wrote its last step (repair, which
// gave up); for a waiting call, the stage that holds it; otherwise the
// stage of its last step.
func stageOf(r pipeline.StatusRecord) string {
	switch {
	case r.Status.Terminal() && !r.Status.OK():
		stage, _ := streams.FailedAt(call.Envelope{Status: r.Status, Failure: r.Failure, History: r.History})
		return stage
	case r.Waiting != nil && r.Waiting.Stage != "" && !r.Status.Terminal():
		return r.Waiting.Stage
	case r.Status == call.ApprovalRequired:
		return streams.Policy
	}
	if n := len(r.History); n > 0 {
		return r.History[n-1].Stage
	}
	return ""
}
