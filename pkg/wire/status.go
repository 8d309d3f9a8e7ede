package wire

// Status is where a call stands. Every status that reaches a user (results,
// dead-letter subjects, audit, the status command) is one of these constants.
type Status string

// Statuses on the way to execution.
const (
	Received         Status = "received"          // normalized from a provider response, not yet parsed
	Parsed           Status = "parsed"            // arguments are one well-formed JSON object
	Validated        Status = "validated"         // arguments satisfy the tool's JSON Schema
	BusinessValid    Status = "business_valid"    // the tool's business rules hold
	Approved         Status = "approved"          // policy allows it (and a human approved, where required)
	ApprovalRequired Status = "approval_required" // waiting for a human decision
	Repairing        Status = "repairing"         // the repair gate is asking the model for a corrected call
)

// Failure statuses, each with its own response (seed: "distinct failures get
// distinct responses").
const (
	TransportIncomplete Status = "transport_incomplete" // the stream never finalized
	Truncated           Status = "truncated"            // arguments cut off (token cap, unexpected end)
	InvalidJSON         Status = "invalid_json"         // arguments are not well-formed JSON
	NoSuchTool          Status = "no_such_tool"         // the named tool is not registered
	SchemaInvalid       Status = "schema_invalid"       // arguments violate the tool's schema
	BusinessInvalid     Status = "business_invalid"     // valid shape, incomplete intent: ask to clarify
	NeedsClarification  Status = "needs_clarification"  // the model said information is missing
	PolicyRejected      Status = "policy_rejected"      // not permitted for this principal
	ApprovalDenied      Status = "approval_denied"      // a human said no
	ApprovalExpired     Status = "approval_expired"     // nobody decided in time
	Rejected            Status = "rejected"             // bad input: a limit exceeded, an undecodable body
	Failed              Status = "failed"               // repair exhausted or impossible; Failure names the class
	Discarded           Status = "discarded"            // a call recovered from text that named no tool or failed its schema
	ExecutionFailed     Status = "execution_failed"     // the executor ran and reported an error
	OutcomeUnknown      Status = "outcome_unknown"      // it may or may not have run: reconcile, never retry blindly
	IdempotencyConflict Status = "idempotency_conflict" // the same call id arrived with other arguments
	BatchAborted        Status = "batch_aborted"        // an atomic batch had a call that did not pass
	// LimitExceeded: a limit of the tool (a rate limit, quota or budget) was
	// used up; nothing ran and nothing was charged. Errors name the limit
	// and when the call would fit.
	LimitExceeded Status = "limit_exceeded"
	Executed      Status = "executed"      // the executor ran it and answered ok
	DryRun        Status = "dry_run"       // every gate passed; nothing executed by request
	NoToolCalls   Status = "no_tool_calls" // the response proposed no call (a response-level outcome)
	// OutputTooLarge: what the stage had to publish for the call does not
	// fit what NATS can store, even cut; the call ends here as Failed with
	// this failure (call.Envelope.Abort), its evidence dead-lettered cut to fit.
	OutputTooLarge Status = "output_too_large"
	// SealInvalid: the execute gate found the call's gate seals missing,
	// forged or made for other arguments (a forged, edited or replayed
	// envelope, a gate skipped); nothing ran.
	SealInvalid Status = "seal_invalid"
	// StreamConflict: a streamed response's events disagree (a second,
	// different payload for a stored seq, or an event of another identity):
	// the whole response ends here and nothing executes.
	StreamConflict Status = "stream_conflict"
	// ResponseIDConflict: a response id seen before arrived with different
	// content: nothing is replaced and nothing executes.
	ResponseIDConflict Status = "response_id_conflict"
)

// Terminal reports whether s is an end state: exactly one terminal outcome
// is published per call.
func (s Status) Terminal() bool {
	return len(successors(s)) == 0
}

// OK reports whether s is a successful end.
func (s Status) OK() bool { return s == Executed || s == DryRun || s == NoToolCalls }

// Repairable reports whether the repair gate may try to fix a call in s. A
// business failure asks for clarification instead; it is never repaired.
func (s Status) Repairable() bool {
	switch s {
	case InvalidJSON, Truncated, SchemaInvalid, NoSuchTool:
		return true
	}
	return false
}

// successors lists the legal moves from s, fresh on every call. A status
// with none is terminal.
func successors(s Status) []Status {
	switch s {
	case Received:
		return []Status{Parsed, InvalidJSON, Truncated, TransportIncomplete, Rejected, Discarded, BatchAborted, NoToolCalls, StreamConflict, ResponseIDConflict}
	case Parsed:
		return []Status{Validated, SchemaInvalid, NoSuchTool, Discarded, BatchAborted}
	case InvalidJSON, Truncated, SchemaInvalid, NoSuchTool:
		return []Status{Repairing, Failed, BatchAborted}
	case Repairing:
		return []Status{Received, Failed, NeedsClarification, BatchAborted}
	case Validated:
		return []Status{BusinessValid, BusinessInvalid, BatchAborted}
	case BusinessValid:
		return []Status{Approved, ApprovalRequired, PolicyRejected, DryRun, BatchAborted}
	case ApprovalRequired:
		return []Status{Approved, ApprovalDenied, ApprovalExpired, BatchAborted}
	case Approved:
		return []Status{Executed, ExecutionFailed, OutcomeUnknown, IdempotencyConflict, BatchAborted, DryRun, SealInvalid, LimitExceeded}
	}
	return nil
}

// nonTerminal lists every status that has successors, in pipeline order.
func nonTerminal() []Status {
	return []Status{Received, Parsed, InvalidJSON, Truncated, SchemaInvalid, NoSuchTool, Repairing, Validated, BusinessValid, ApprovalRequired, Approved}
}

// Successors lists the statuses a call may move to from s (none when s is
// terminal). The caller owns the returned slice.
func Successors(s Status) []Status { return successors(s) }

// Statuses lists every status that appears in the transition table, each
// once, in no promised order.
func Statuses() []Status {
	seen := map[Status]bool{}
	var all []Status
	for _, from := range nonTerminal() {
		for _, s := range append([]Status{from}, successors(from)...) {
			if !seen[s] {
				seen[s] = true
				all = append(all, s)
			}
		}
	}
	return all
}

// Legal reports whether a call may move from one status to another.
func Legal(from, to Status) bool {
	for _, s := range successors(from) {
		if s == to {
			return true
		}
	}
	return false
}
