package gates

import (
	"errors"
	"strings"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

// checkSeals verifies e's gate seals (seal.Keyring.Verify) before anything
// else is done with it. A call that passes gets the note of which seals were
// checked, for its execute step; one that fails ends seal_invalid, its
// status set directly since the envelope's own is not trusted, and nothing
// runs.
func (x *Execute) checkSeals(e call.Envelope) (string, []call.Envelope, bool) {
	checked, err := x.Seals.Verify(&e)
	if err == nil {
		return "seals checked: " + strings.Join(checked, ", "), nil, true
	}
	stage := seal.Execute
	var se *seal.Error
	if errors.As(err, &se) {
		stage = se.Stage
	}
	e.Status, e.Failure = call.SealInvalid, ""
	e.Errors = []string{err.Error() + "; nothing was run"}
	e.History = append(e.History, call.Step{Stage: streams.Execute, Status: call.SealInvalid, At: x.Now().UTC(), Note: seal.Note(stage)})
	return "", []call.Envelope{e}, false
}
