// Package canon produces the canonical JSON form of a document: object keys
// sorted, no insignificant white space, numbers kept exactly as written and
// no HTML escaping. Two documents that mean the same have the same bytes, so
// the canonical form is what idempotency keys and argument hashes are built on.
package canon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// JSON returns the canonical form of one JSON document. It fails when raw is
// not exactly one valid JSON value.
func JSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canon: %w", err)
	}
	if dec.More() {
		return nil, errors.New("canon: more than one JSON value")
	}
	return Value(v)
}

// Value returns the canonical JSON of an already decoded value. Maps are
// written with sorted keys by encoding/json; json.Number keeps the digits.
func Value(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canon: %w", err)
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if bytes.Contains(out, []byte(`\ufffd`)) {
		// encoding/json writes a string's invalid UTF-8 as the escape
		// \ufffd, but a real U+FFFD as itself: once more through JSON makes
		// the form a fixed point, so decoding and re-encoding a canonical
		// document (parse.Strict does) gives the same bytes.
		return JSON(out)
	}
	return out, nil
}
