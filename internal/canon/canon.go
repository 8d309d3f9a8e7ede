// Package canon produces the canonical JSON form of a document: object keys
// sorted, no insignificant white space, numbers kept exactly as written and
// no HTML escaping. Two documents that mean the same have the same bytes, so
// the canonical form is what idempotency keys and argument hashes are built on.
//
// Only exact documents have a canonical form: text that is not UTF-8, a lone
// surrogate escape (\uD800) or a duplicate object key is refused, never
// replaced by U+FFFD or decided last-wins.
package canon

import (
	"bytes"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"io"
)

// ErrInvalidUTF8 is wrapped by the errors of JSON and Value for text that is
// not UTF-8: raw invalid bytes, or a \uD800-\uDFFF escape outside a pair.
var ErrInvalidUTF8 = errors.New("canon: text is not valid UTF-8 (RFC 8259 §8.1); nothing is replaced, send UTF-8")

// JSON returns the canonical form of one JSON document. It fails when raw is
// not exactly one valid JSON value, when it is not UTF-8 or holds a lone
// surrogate escape (the error wraps ErrInvalidUTF8), and when an object names
// a key twice.
func JSON(raw []byte) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	e := encoder{strict: true, buf: make([]byte, 0, len(raw))}
	var scratch []member
	err := e.fromTokens(dec, &scratch)
	if err == nil {
		err = oneValueLeft(dec)
	}
	if err != nil {
		// The one pass refused raw; say why the way exact does (syntax,
		// or UTF-8), which is what callers match on.
		if xerr := exact(raw); xerr != nil {
			return nil, xerr
		}
		return nil, fmt.Errorf("canon: %w", err)
	}
	return e.buf, nil
}

// exact checks raw as RFC 8259 with RFC 7493's rules: one value, UTF-8
// throughout, unique keys. The syntax is checked first with invalid UTF-8
// allowed, so a remaining failure is the UTF-8 one.
func exact(raw []byte) error {
	if err := oneValue(raw, jsontext.AllowInvalidUTF8(true)); err != nil {
		return fmt.Errorf("canon: %w", err)
	}
	if err := oneValue(raw); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidUTF8, err)
	}
	return nil
}

func oneValue(raw []byte, opts ...jsontext.Options) error {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), opts...)
	if _, err := dec.ReadValue(); err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// Value returns the canonical JSON of an already decoded value: maps with
// sorted keys, json.Number with its digits. A string (or key) that is not
// valid UTF-8 is an error wrapping ErrInvalidUTF8.
func Value(v any) ([]byte, error) {
	e := encoder{strict: true}
	if err := e.value(v); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// Exact is Value, except that a string that is not valid UTF-8 is written
// with its bytes as they are. The output is then not JSON, and a strict
// parser refuses it at the first such byte: it keeps the evidence of what a
// provider sent (a Gemini partialArgs string) for the parse gate to judge,
// instead of turning it into U+FFFD.
func Exact(v any) ([]byte, error) {
	var e encoder
	if err := e.value(v); err != nil {
		return nil, err
	}
	return e.buf, nil
}
