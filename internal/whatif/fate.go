package whatif

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
)

// Kind is a gate verdict, the part of a call's fate the gates decide.
type Kind string

// Verdicts.
const (
	Pass     Kind = "pass"     // every gate passed: it runs (or ran, or dry-ran)
	Approval Kind = "approval" // it waits for a human decision
	Refused  Kind = "refused"  // a gate stopped it (Fate.Class says which)
	Other    Kind = "other"    // it ended in a way the gates do not decide (batch aborted, a conflict, ...)
)

// Fate is a call's verdict: its kind, the status class of a refusal or an
// other ending, and why (a gate's first error, redacted and cut).
type Fate struct {
	Kind  Kind
	Class call.Status
	Why   string
	// Limit is the limit a re-evaluated call would exceed (Class
	// limit_exceeded), for the report's line.
	Limit string
}

// same reports whether two fates are the same for the report: same kind,
// and for refusals the same class.
func (f Fate) same(g Fate) bool { return f.Kind == g.Kind && f.Class == g.Class }

// Repairable reports whether a refusal goes to the repair gate in the
// pipeline, which may fix it (the re-evaluation never calls the model).
func (f Fate) Repairable() bool { return f.Kind == Refused && f.Class.Repairable() }

// Was is how the report names a recorded fate.
func (f Fate) Was(status call.Status) string {
	switch f.Kind {
	case Pass:
		return string(status) // executed, dry_run, execution_failed, ...
	case Approval:
		return "approval (" + string(status) + ")"
	case Refused:
		return "rejected: " + string(f.Class)
	}
	return string(f.Class)
}

// Would is how the report names a re-evaluated fate: its kind and class;
// the reason is beside it (Change.Why), so calls refused by one rule for
// different values make one line.
func (f Fate) Would() string {
	switch f.Kind {
	case Pass:
		return "would pass"
	case Approval:
		return "would wait for approval"
	}
	if f.Repairable() {
		return "would go to repair: " + string(f.Class)
	}
	if f.Class == call.LimitExceeded && f.Limit != "" {
		return "would exceed limit " + f.Limit
	}
	return "would be rejected: " + string(f.Class)
}

// whyMax bounds the reason the report quotes.
const whyMax = 120

// why is errs' first, redacted and cut to whyMax runes.
func why(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	s := strings.Join(strings.Fields(redact.Text(errs[0])), " ")
	if r := []rune(s); len(r) > whyMax {
		s = string(r[:whyMax-1]) + "…"
	}
	return s
}

// FateOf is the verdict of e as the gates left it (Evaluator.Evaluate).
func FateOf(e call.Envelope) Fate {
	switch e.Status {
	case call.Approved, call.DryRun:
		return Fate{Kind: Pass}
	case call.ApprovalRequired:
		return Fate{Kind: Approval}
	}
	class := e.Status
	if e.Status == call.Failed && e.Failure != "" {
		class = e.Failure
	}
	return Fate{Kind: Refused, Class: class, Why: why(e.Errors)}
}

// Recorded is what the status record of a call says about it, kept small:
// one per call of the window is held while the input is read.
type Recorded struct {
	CallID     string
	ResponseID string
	Tool       string // as the record shows it (an unregistered name hashed)
	Status     call.Status
	Fate       Fate
	CreatedAt  time.Time
	Verified   bool // the identity came from a token
	Asserted   bool // a producer the deployment lets assert identity sent it: its header roles counted
	Recovered  bool // found in the assistant's text
	done       bool // re-evaluated (or counted) already
}

// record is the part of a status record (pipeline.StatusRecord) read here.
type record struct {
	CallID     string      `json:"call_id"`
	ResponseID string      `json:"response_id"`
	Tool       string      `json:"tool"`
	Status     call.Status `json:"status"`
	Failure    call.Status `json:"failure"`
	Errors     []string    `json:"errors"`
	History    []call.Step `json:"history"`
	Identity   string      `json:"identity"`
	Source     string      `json:"source"`
}

// ErrBadRecord: a status record that is not one.
var ErrBadRecord = errors.New("whatif: unreadable status record")

// passed reports whether status is an ending of a call every gate passed.
func passed(status call.Status) bool {
	switch status {
	case call.Approved, call.Executed, call.DryRun, call.ExecutionFailed, call.OutcomeUnknown,
		call.IdempotencyConflict, call.OutputTooLarge:
		return true
	}
	return false
}

// DecodeRecord reads a status record of the calls bucket into Recorded.
// Anything that is not a record (not JSON, no call id, no status, no
// history) is ErrBadRecord.
func DecodeRecord(data []byte) (Recorded, error) {
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return Recorded{}, fmt.Errorf("%w: %v", ErrBadRecord, err)
	}
	if r.CallID == "" || r.Status == "" || len(r.History) == 0 {
		return Recorded{}, fmt.Errorf("%w: no call id, status or history", ErrBadRecord)
	}
	rec := Recorded{CallID: r.CallID, ResponseID: r.ResponseID, Tool: r.Tool, Status: r.Status, CreatedAt: r.History[0].At,
		Verified: r.Identity == call.IdentityVerified, Asserted: r.Identity == call.IdentityAsserted, Recovered: r.Source == call.SourceTextJSON}
	waited := slices.ContainsFunc(r.History, func(s call.Step) bool { return s.Status == call.ApprovalRequired })
	switch {
	case waited:
		rec.Fate = Fate{Kind: Approval}
	case passed(r.Status):
		rec.Fate = Fate{Kind: Pass}
	case r.Status.Terminal() && gateClass(classOf(r.Status, r.Failure)):
		rec.Fate = Fate{Kind: Refused, Class: classOf(r.Status, r.Failure), Why: why(r.Errors), Limit: limitOf(r.Status, r.Errors)}
	default:
		rec.Fate = Fate{Kind: Other, Class: r.Status}
	}
	return rec, nil
}

// limitOf is the limit a call that ended limit_exceeded exceeded, as the
// execute gate's message names it ("limit NAME: ..."); "" when unknown.
func limitOf(status call.Status, errs []string) string {
	if status != call.LimitExceeded || len(errs) == 0 {
		return ""
	}
	rest, ok := strings.CutPrefix(errs[0], "limit ")
	name, _, found := strings.Cut(rest, ":")
	if !ok || !found || strings.ContainsAny(name, " \t") || len(name) > 64 {
		return ""
	}
	return name
}

func classOf(status, failure call.Status) call.Status {
	if status == call.Failed && failure != "" {
		return failure
	}
	return status
}

// gateClass reports whether class is an ending the parse, validate,
// business, policy or limit gate decides (limits: at execute, before the
// call runs).
func gateClass(class call.Status) bool {
	switch class {
	case call.InvalidJSON, call.Truncated, call.Rejected, call.NoSuchTool, call.SchemaInvalid,
		call.BusinessInvalid, call.NeedsClarification, call.PolicyRejected, call.LimitExceeded:
		return true
	}
	return false
}
