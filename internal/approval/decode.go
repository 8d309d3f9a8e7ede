package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
)

// ErrMalformed: a stored record could not be read, or broke an invariant
// every record toolgate writes keeps. Nothing in it is trusted.
var ErrMalformed = errors.New("approval: malformed approval record")

// Decode reads the record stored under key and checks it: the call id is
// the key, the tool is named, the argument hash is 64 hex digits, the state
// is one of the four, the envelope is the waiting call (same id and tool,
// arguments with that hash), and a decided record says by whom and when. An
// error wraps ErrMalformed; a record it returns keeps every one of these.
func Decode(key string, data []byte) (Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("%w %s: %v", ErrMalformed, key, err)
	}
	if dec.More() {
		return Record{}, fmt.Errorf("%w %s: data after the record", ErrMalformed, key)
	}
	if err := r.check(key); err != nil {
		return Record{}, fmt.Errorf("%w %s: %v", ErrMalformed, key, err)
	}
	return r, nil
}

func (r Record) check(key string) error {
	switch {
	case r.CallID == "" || r.CallID != key:
		return fmt.Errorf("call_id %q is not the key", redact.Clip(r.CallID))
	case r.Tool == "":
		return errors.New("no tool")
	case !redact.IsSHA256Hex(r.ArgsHash):
		return fmt.Errorf("args_hash %q is not a sha256 in hex", redact.Clip(r.ArgsHash))
	case r.RequestedAt.IsZero() || r.ExpiresAt.IsZero():
		return errors.New("no requested_at or expires_at")
	}
	switch r.State {
	case Pending:
	case Approved, Denied, Expired:
		if r.By == "" || r.DecidedAt.IsZero() {
			return fmt.Errorf("state %s without by or decided_at", r.State)
		}
	default:
		return fmt.Errorf("unknown state %q", redact.Clip(string(r.State)))
	}
	e, err := call.Unmarshal(r.Envelope)
	switch {
	case err != nil:
		return fmt.Errorf("envelope: %v", err)
	case e.CallID != r.CallID || e.ToolName != r.Tool:
		return fmt.Errorf("envelope is call %q of tool %q, not this record's", redact.Clip(e.CallID), redact.Clip(e.ToolName))
	case e.Status != call.ApprovalRequired:
		return fmt.Errorf("envelope is %s, not %s", redact.Clip(string(e.Status)), call.ApprovalRequired)
	case ArgsHash(e.Arguments) != r.ArgsHash:
		return errors.New("envelope arguments do not have the record's args_hash")
	}
	return nil
}

// Salvage returns the waiting envelope of a malformed record stored under
// key when the envelope itself is intact (the call it names is key, waiting
// for approval): the sweeper can then settle the call instead of leaving it
// waiting forever.
func Salvage(key string, data []byte) (call.Envelope, bool) {
	var raw struct {
		Envelope json.RawMessage `json:"envelope"`
	}
	if json.Unmarshal(data, &raw) != nil || len(raw.Envelope) == 0 {
		return call.Envelope{}, false
	}
	e, err := call.Unmarshal(raw.Envelope)
	if err != nil || e.CallID != key || e.Status != call.ApprovalRequired || e.ToolName == "" {
		return call.Envelope{}, false
	}
	return e, true
}
