package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/redact"
)

// ErrMalformedStatus: a status record in toolgate_calls that cannot be read
// or breaks what every record toolgate writes keeps.
var ErrMalformedStatus = errors.New("malformed status record")

// MaxReplays bounds the replay count a record or a letter may claim: a
// replay numbers past it, and message ids carry it.
const MaxReplays = 1 << 20

// DecodeStatus reads the status record stored under key in the calls bucket
// and checks it: one JSON object for the call key of a response, in a known
// status, with counts that are not negative and replays within bounds, and
// a history of known statuses. An error wraps ErrMalformedStatus.
func DecodeStatus(key string, data []byte) (pipeline.StatusRecord, error) {
	var r pipeline.StatusRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&r)
	if err == nil && dec.More() {
		err = errors.New("data after the record")
	}
	if err == nil {
		err = checkStatus(key, r)
	}
	if err != nil {
		return pipeline.StatusRecord{}, fmt.Errorf("%w %s: %v", ErrMalformedStatus, redact.Clip(key), err)
	}
	return r, nil
}

func checkStatus(key string, r pipeline.StatusRecord) error {
	statuses := call.Statuses()
	switch {
	case r.CallID != key:
		return fmt.Errorf("call_id %q is not the key", redact.Clip(r.CallID))
	case !call.ValidResponseID(r.ResponseID):
		return fmt.Errorf("response_id %q is not a token", redact.Clip(r.ResponseID))
	case !slices.Contains(statuses, r.Status):
		return fmt.Errorf("unknown status %q", redact.Clip(string(r.Status)))
	case r.RepairAttempts < 0 || r.Replays < 0 || r.Replays > MaxReplays:
		return errors.New("negative or out-of-range counts")
	}
	for i, s := range r.History {
		if !slices.Contains(statuses, s.Status) {
			return fmt.Errorf("history step %d: unknown status %q", i, redact.Clip(string(s.Status)))
		}
	}
	return nil
}
