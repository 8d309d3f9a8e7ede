package gates

import (
	"context"

	"github.com/toolgate/toolgate/pkg/call"
	"github.com/toolgate/toolgate/streams"
)

// Repair is the repair gate. Without a model endpoint it calls nothing: the
// failure goes straight to the result as a tool-result error the caller can
// hand back to its own model.
type Repair struct {
	Tools Tools
	Now   Clock
}

// Handle implements pipeline.Gate.
func (r *Repair) Handle(ctx context.Context, e call.Envelope) ([]call.Envelope, error) {
	failure := e.Status
	errs := e.Errors
	if err := e.Move(streams.Repair, call.Failed, r.Now(), errs...); err != nil {
		return nil, err
	}
	e.Failure = failure
	e.Note("no repair endpoint configured: the failure is returned to the caller")
	return []call.Envelope{e}, nil
}
