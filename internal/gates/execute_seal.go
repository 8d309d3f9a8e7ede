package gates

import (
	"errors"
	"strings"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

// checkSeals verifies e's gate seals (seal.Keyring.Verify) before anything
// else is done with it. A call that fails ends seal_invalid, its status set
// directly since the envelope's own is not trusted, and nothing runs; one
// that passes notes which seals were checked.
func (x *Execute) checkSeals(e *call.Envelope) ([]call.Envelope, bool) {
	checked, err := x.Seals.Verify(e)
	if err == nil {
		e.Note("seals checked: " + strings.Join(checked, ", "))
		return nil, true
	}
	stage := seal.Execute
	var se *seal.Error
	if errors.As(err, &se) {
		stage = se.Stage
	}
	e.Status, e.Failure = call.SealInvalid, ""
	e.Errors = []string{err.Error() + "; nothing was run"}
	e.History = append(e.History, call.Step{Stage: streams.Execute, Status: call.SealInvalid, At: x.Now().UTC(), Note: seal.Note(stage)})
	return []call.Envelope{*e}, false
}
