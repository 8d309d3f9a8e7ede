// Package pipeline joins the gates: it turns the envelopes a gate returns
// into the messages the worker publishes (the next stage's input, the
// terminal result, the dead letter, the status record), and adapts an
// envelope gate to the worker's handler.
package pipeline

import (
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/streams"
)

// Next names the stage that handles a call in status s, or "" when no stage
// does (terminal, or waiting for a human).
func Next(s call.Status) string {
	switch s {
	case call.Received:
		return streams.Parse
	case call.Parsed:
		return streams.Validate
	case call.Validated:
		return streams.Business
	case call.BusinessValid:
		return streams.Policy
	case call.Approved:
		return streams.Execute
	case call.InvalidJSON, call.Truncated, call.SchemaInvalid, call.NoSuchTool:
		return streams.Repair
	}
	return ""
}

// Entry is the status a call is put in to enter stage, for a replay.
func Entry(stage string) call.Status {
	switch stage {
	case streams.Parse:
		return call.Received
	case streams.Validate:
		return call.Parsed
	case streams.Business:
		return call.Validated
	case streams.Policy:
		return call.BusinessValid
	case streams.Execute:
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
	return streams.Accumulate, failure
}
