// Package repair is the pure core of the repair gate: whether a failed call
// may be sent back to the model (Decide), the request that asks for a
// corrected call (Prompt), and what the model's answer means (Answer).
// Repair is bounded (default one attempt per call) and only for formatting
// failures; a call that is valid but semantically incomplete needs
// clarification, never a repair prompt.
package repair

import (
	"encoding/json"
	"fmt"
	"time"
)

// Failure is the class of failure that sent a call to the repair gate. The
// values equal the call statuses of the same name.
type Failure string

// The repairable failure classes.
const (
	InvalidJSON   Failure = "invalid_json"
	Truncated     Failure = "truncated"
	SchemaInvalid Failure = "schema_invalid"
	NoSuchTool    Failure = "no_such_tool"
)

// DefaultMaxAttempts is the repair bound per call when a tool sets none.
const DefaultMaxAttempts = 1

// Stable first words of Decide's why, for routing and metrics.
const (
	ReasonRepair        = "repair"         // a repair request should be sent
	ReasonExhausted     = "exhausted"      // the bound is reached: the call ends "failed"
	ReasonNotRepairable = "not_repairable" // this class is answered otherwise (clarification, rejection, ...)
	ReasonNoValidTools  = "no_valid_tools" // no_such_tool with no valid tool to offer: "failed"
)

// Attempt is the evidence of one repair attempt, kept with the call so an
// exhausted call shows every attempt's raw text and errors.
type Attempt struct {
	N            int       `json:"n"`
	RawArguments string    `json:"raw_arguments"`
	Errors       []string  `json:"errors,omitempty"`
	Answer       string    `json:"answer,omitempty"` // the model's raw text or tool call arguments
	At           time.Time `json:"at"`
}

// Input is what the repair gate knows about a failed call.
type Input struct {
	Failure Failure
	// Tool is the name the model called. For no_such_tool it is the unknown
	// name; the tool offered is Closest(Tool, ValidTools).
	Tool string
	// Description and Schema describe the tool to offer: the called tool, or
	// for no_such_tool the definition of Closest(Tool, ValidTools).
	Description string
	Schema      json.RawMessage
	// RawArguments are the arguments exactly as the model sent them.
	RawArguments string
	// Errors are every parse or validation error, one per entry.
	Errors []string
	// ValidTools are the names the model may call (for no_such_tool).
	ValidTools []string
	// Attempts is how many repair attempts this call has had so far.
	Attempts int
	// MaxAttempts is the tool's repair.max_attempts: 0 means
	// DefaultMaxAttempts, a negative value disables repair for the tool.
	MaxAttempts int
	// AllowText offers the tool with automatic instead of forced tool choice,
	// so the model can answer in text that information is missing (forced
	// choice makes every answer a tool call, which invites invented values).
	// Off by default: the tool is forced.
	AllowText bool
}

// maxAttempts is the effective bound.
func (in Input) maxAttempts() int {
	switch {
	case in.MaxAttempts == 0:
		return DefaultMaxAttempts
	case in.MaxAttempts < 0:
		return 0
	}
	return in.MaxAttempts
}

// Decide says whether to send a repair request for in. It is false when the
// class is not one of the four repairable ones (business_invalid asks for
// clarification, policy and approval failures are never repaired), when
// no_such_tool has no valid tool to offer, or when Attempts has reached the
// bound (the call then ends "failed" with its attempts kept). why starts
// with one of the Reason constants followed by ": " and the detail.
func Decide(in Input) (repair bool, why string) {
	switch in.Failure {
	case InvalidJSON, Truncated, SchemaInvalid, NoSuchTool:
	default:
		return false, fmt.Sprintf("%s: %q is not repaired (only invalid_json, truncated, schema_invalid and no_such_tool are)", ReasonNotRepairable, in.Failure)
	}
	limit := in.maxAttempts()
	if in.Attempts >= limit {
		return false, fmt.Sprintf("%s: %d of %d repair attempts used", ReasonExhausted, in.Attempts, limit)
	}
	if in.Failure == NoSuchTool && len(in.ValidTools) == 0 {
		return false, fmt.Sprintf("%s: tool %q does not exist and no valid tool is defined", ReasonNoValidTools, in.Tool)
	}
	return true, fmt.Sprintf("%s: attempt %d of %d for %s", ReasonRepair, in.Attempts+1, limit, in.Failure)
}
