package streams

import "github.com/toolgate/toolgate/internal/call"

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
