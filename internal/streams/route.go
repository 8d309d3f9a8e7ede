package streams

import "github.com/toolgate/toolgate/internal/call"

// Next names the stage that handles a call in status s, or "" when no stage
// does (terminal, or waiting for a human).
func Next(s call.Status) string {
	switch s {
	case call.Received:
		return Parse
	case call.Parsed:
		return Validate
	case call.Validated:
		return Business
	case call.BusinessValid:
		return Policy
	case call.Approved:
		return Execute
	case call.InvalidJSON, call.Truncated, call.SchemaInvalid, call.NoSuchTool:
		return Repair
	}
	return ""
}

// Entry is the status a call is put in to enter stage, for a replay.
func Entry(stage string) call.Status {
	switch stage {
	case Parse:
		return call.Received
	case Validate:
		return call.Parsed
	case Business:
		return call.Validated
	case Policy:
		return call.BusinessValid
	case Execute:
		return call.Approved
	}
	return ""
}

// FailedAt names the stage and failure class of a failed terminal call: the
// stage that classified the failure, which is where a replay starts.
func FailedAt(e call.Envelope) (stage, failure string) {
	failure = string(e.Status)
	if e.Status == call.Failed && e.Failure != "" {
		failure = string(e.Failure)
	}
	for i := len(e.History) - 1; i >= 0; i-- {
		if string(e.History[i].Status) == failure {
			return e.History[i].Stage, failure
		}
	}
	if n := len(e.History); n > 0 {
		return e.History[n-1].Stage, failure
	}
	return Accumulate, failure
}
