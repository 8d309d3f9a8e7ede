package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/redact"
)

// maxBatchReason bounds the reason text a decision record may carry.
const maxBatchReason = 16 << 10

// decodeStrict decodes exactly one JSON object from data into v, refusing
// unknown members and trailing data.
func decodeStrict(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 || bytes.TrimSpace(data)[0] != '{' {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the record")
	}
	return nil
}

// DecodeDecision reads an atomic batch's decision record: one object with
// run, reason (at most 16 KiB) and a time. An abort always says why.
func DecodeDecision(data []byte) (Decision, error) {
	var d Decision
	if err := decodeStrict(data, &d); err != nil {
		return Decision{}, fmt.Errorf("gates: batch decision: %w", err)
	}
	switch {
	case d.At.IsZero():
		return Decision{}, errors.New("gates: batch decision: no time")
	case len(d.Reason) > maxBatchReason:
		return Decision{}, fmt.Errorf("gates: batch decision: reason of %d bytes, over %d", len(d.Reason), maxBatchReason)
	case !d.Run && d.Reason == "":
		return Decision{}, errors.New("gates: batch decision: an abort without a reason")
	}
	return d, nil
}

// malformedDecision is what every call of a batch follows when its decision
// record is malformed: abort. All of them read the same record, so they all
// decide alike.
func malformedDecision(key string, err error) Decision {
	return Decision{Reason: fmt.Sprintf("the atomic batch's decision record %s is malformed (%v); no call of the batch was run. Send the calls again together", key, err)}
}

// DecodePassMark reads a "passed" mark, which must name callID and a time.
func DecodePassMark(callID string, data []byte) (PassMark, error) {
	var m PassMark
	if err := decodeStrict(data, &m); err != nil {
		return m, fmt.Errorf("gates: passed mark: %w", err)
	}
	switch {
	case m.CallID != callID:
		return m, fmt.Errorf("gates: passed mark names call %q, not %s", redact.Clip(m.CallID), callID)
	case m.At.IsZero():
		return m, errors.New("gates: passed mark has no time")
	}
	return m, nil
}

// DecodeFailMark reads a "failed" mark, which must name callID and the
// status the call ended with.
func DecodeFailMark(callID string, data []byte) (FailMark, error) {
	var m FailMark
	if err := decodeStrict(data, &m); err != nil {
		return m, fmt.Errorf("gates: failed mark: %w", err)
	}
	switch {
	case m.CallID != callID:
		return m, fmt.Errorf("gates: failed mark names call %q, not %s", redact.Clip(m.CallID), callID)
	case m.Status == "" || len(m.Status) > 64:
		return m, errors.New("gates: failed mark has no status")
	case len(m.Error) > maxBatchReason:
		m.Error = m.Error[:maxBatchReason] + "..." // long, not wrong: keep the start
	}
	return m, nil
}

// parseBatchKey splits a key of batch id into its kind and index: "decision"
// (index -1), or tool, passed and failed with an index inside the batch.
func parseBatchKey(id string, size int, key string) (kind string, index int, err error) {
	rest, ok := strings.CutPrefix(key, id+".")
	if !ok {
		return "", 0, fmt.Errorf("gates: key %q is not of batch %s", redact.Clip(key), id)
	}
	if rest == "decision" {
		return rest, -1, nil
	}
	kind, num, ok := strings.Cut(rest, ".")
	if !ok || (kind != "tool" && kind != "passed" && kind != "failed") {
		return "", 0, fmt.Errorf("gates: key %q is no batch record toolgate writes", redact.Clip(key))
	}
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 || i >= size || strconv.Itoa(i) != num {
		return "", 0, fmt.Errorf("gates: key %q: index outside the batch of %d", redact.Clip(key), size)
	}
	return kind, i, nil
}
