package provider

import (
	"bytes"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"io"
)

// ErrCutTranscript is wrapped by the error SplitTranscript returns for a
// JSON-array stream that ends inside an element (the connection was cut):
// the complete elements come with it, the cut one is dropped.
var ErrCutTranscript = errors.New("provider: the transcript ends inside an event (the connection was cut)")

// isJSONArray reports a stream sent as one JSON array: Gemini's
// streamGenerateContent without alt=sse, whose body is
// [{chunk},\r\n{chunk}...] written out as the chunks are made. No provider's
// whole body is an array.
func isJSONArray(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(t) > 0 && t[0] == '['
}

// splitJSONArray returns the elements of one JSON array, or of several back
// to back (a recording of several responses), in order, as copies. Strings
// holding "},{", brackets or escapes are read as strings, not cut. An array
// that ends early returns its complete elements and an error wrapping
// ErrCutTranscript; anything else that is not such an array is an error
// naming the byte offset. Elements are checked for JSON syntax only: their
// keys and UTF-8 are the codec's to judge.
func splitJSONArray(data []byte) ([][]byte, error) {
	data = bytes.TrimPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("\ufeff"))
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	var out [][]byte
	cut := func(err error) ([][]byte, error) {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return out, fmt.Errorf("%w: JSON array: %d complete elements, then it ends at byte %d inside the next", ErrCutTranscript, len(out), len(data))
		}
		return out, fmt.Errorf("provider: JSON-array stream: %w", err)
	}
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return cut(err)
		}
		if tok.Kind() != '[' {
			return out, fmt.Errorf("provider: JSON-array stream: a %v at byte %d where an array starts (send the streamGenerateContent body as it arrived)", tok.Kind(), dec.InputOffset())
		}
		for dec.PeekKind() != ']' {
			if dec.PeekKind() == 0 {
				_, err := dec.ReadValue() // reports the cut or the syntax error
				if err == nil {
					err = io.ErrUnexpectedEOF
				}
				return cut(err)
			}
			v, err := dec.ReadValue()
			if err != nil {
				return cut(err)
			}
			out = append(out, bytes.Clone(v))
		}
		if _, err := dec.ReadToken(); err != nil {
			return cut(err)
		}
	}
	if len(out) == 0 {
		return nil, ErrEmptyTranscript
	}
	return out, nil
}
