package idem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/internal/redact"
)

// Decode reads the record stored under key and checks it: it is one JSON
// object for key, names a call and a 64-hex fingerprint, and is pending or
// completed. A record that fails is returned as a stand-in instead of an
// error (see malformed): a stored answer nobody can read must neither run
// the call again nor stall it.
func Decode(key string, data []byte) Record {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&r)
	if err == nil && dec.More() {
		err = errors.New("data after the record")
	}
	if err == nil {
		err = r.check(key)
	}
	if err != nil {
		return malformed(key, err)
	}
	return r
}

// malformed is the stand-in for a record of key that could not be read: a
// pending claim with no owner whose lease ran out long ago. The execute
// gate treats it as a claim whose answer was lost: it asks the tool whether
// the call happened and otherwise ends it outcome_unknown, never running it.
func malformed(key string, err error) Record {
	return Record{Key: key, State: Pending, Malformed: fmt.Sprintf("idem: record %s is malformed: %v", redact.Clip(key), err)}
}

func (r Record) check(key string) error {
	switch {
	case r.Key != key:
		return fmt.Errorf("key %q is not the record's key", redact.Clip(r.Key))
	case r.CallID == "":
		return errors.New("no call_id")
	case !redact.IsSHA256Hex(r.Fingerprint):
		return fmt.Errorf("fingerprint %q is not a sha256 in hex", redact.Clip(r.Fingerprint))
	case r.State != Pending && r.State != Completed:
		return fmt.Errorf("unknown state %q", redact.Clip(string(r.State)))
	case r.State == Pending && r.Owner == "":
		return errors.New("a pending claim without an owner")
	}
	return nil
}

// existingFor checks that the record found under claim's key is for the same
// call and arguments (the key is a hash of both): one that is not is
// malformed.
func existingFor(claim, existing Record) Record {
	if existing.Malformed == "" && (existing.CallID != claim.CallID || existing.Fingerprint != claim.Fingerprint) {
		return malformed(claim.Key, fmt.Errorf("it is for call %q with fingerprint %q, not this claim's", redact.Clip(existing.CallID), redact.Clip(existing.Fingerprint)))
	}
	return existing
}
