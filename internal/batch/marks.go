package batch

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// FailMark is the value of a "failed" batch mark: which call of a batch
// ended with a failure, and why. The execute gate turns the first one it
// sees into the abort of an atomic batch, naming the call.
type FailMark struct {
	CallID string      `json:"call_id"`
	Tool   string      `json:"tool"`
	Status call.Status `json:"status"`
	Error  string      `json:"error,omitempty"`
}

// PassMark is the value of a "passed" batch mark: the call reached execute
// (or ended as a dry run) at At, having passed every gate.
type PassMark struct {
	CallID string    `json:"call_id"`
	At     time.Time `json:"at"`
}

// Marks are the writes into the batches bucket that let the execute gate
// coordinate atomic batches, for a call of a response with more than one
// call: its tool name when it (re-)enters the pipeline as received (so
// execute can tell whether any tool of the batch is atomic), "failed" when it
// ends with a failure anywhere, "passed" when it ends as a dry run (it passed
// every gate without reaching execute). Marks are written for every
// multi-call response, since whether a batch is atomic depends on tools this
// envelope does not know. cut bounds a failed mark's error (pipeline.CutText).
func Marks(e call.Envelope, cut func(string) string) []worker.Output {
	if e.Batch.Size < 2 || e.Batch.ID == "" {
		return nil
	}
	b := e.Batch
	switch {
	case e.Status == call.Received:
		return []worker.Output{{Subject: streams.BatchMark(b.ID, "tool", b.Index), Data: []byte(e.ToolName)}}
	case e.Status == call.DryRun:
		data, _ := json.Marshal(PassMark{CallID: e.CallID, At: e.History[len(e.History)-1].At})
		return []worker.Output{{Subject: streams.BatchMark(b.ID, "passed", b.Index), Data: data}}
	case e.Status.Terminal() && !e.Status.OK():
		st := e.Status
		if st == call.Failed && e.Failure != "" {
			st = e.Failure
		}
		data, _ := json.Marshal(FailMark{CallID: e.CallID, Tool: e.ToolName, Status: st, Error: cut(strings.Join(e.Errors, "; "))})
		return []worker.Output{{Subject: streams.BatchMark(b.ID, "failed", b.Index), Data: data}}
	}
	return nil
}
