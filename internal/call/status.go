package call

import "github.com/toolgate/toolgate/pkg/wire"

// Status is where a call stands; the one list of statuses and the state
// machine live in pkg/wire (the public contract), these are their names here.
type Status = wire.Status

// Statuses on the way to execution (see wire).
const (
	Received         = wire.Received
	Parsed           = wire.Parsed
	Validated        = wire.Validated
	BusinessValid    = wire.BusinessValid
	Approved         = wire.Approved
	ApprovalRequired = wire.ApprovalRequired
	Repairing        = wire.Repairing
)

// Failure and end statuses (see wire).
const (
	TransportIncomplete = wire.TransportIncomplete
	Truncated           = wire.Truncated
	InvalidJSON         = wire.InvalidJSON
	NoSuchTool          = wire.NoSuchTool
	SchemaInvalid       = wire.SchemaInvalid
	BusinessInvalid     = wire.BusinessInvalid
	NeedsClarification  = wire.NeedsClarification
	PolicyRejected      = wire.PolicyRejected
	ApprovalDenied      = wire.ApprovalDenied
	ApprovalExpired     = wire.ApprovalExpired
	Rejected            = wire.Rejected
	Failed              = wire.Failed
	Discarded           = wire.Discarded
	ExecutionFailed     = wire.ExecutionFailed
	OutcomeUnknown      = wire.OutcomeUnknown
	IdempotencyConflict = wire.IdempotencyConflict
	BatchAborted        = wire.BatchAborted
	LimitExceeded       = wire.LimitExceeded
	Executed            = wire.Executed
	DryRun              = wire.DryRun
	NoToolCalls         = wire.NoToolCalls
	OutputTooLarge      = wire.OutputTooLarge
	SealInvalid         = wire.SealInvalid
	StreamConflict      = wire.StreamConflict
	ResponseIDConflict  = wire.ResponseIDConflict
)

// Successors lists the statuses a call may move to from s (none when s is
// terminal). The caller owns the returned slice.
func Successors(s Status) []Status { return wire.Successors(s) }

// Statuses lists every status that appears in the transition table, in no
// particular order.
func Statuses() []Status { return wire.Statuses() }

// Legal reports whether a call may move from one status to another.
func Legal(from, to Status) bool { return wire.Legal(from, to) }
