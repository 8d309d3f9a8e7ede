package parse

import (
	"github.com/toolgate/toolgate/internal/canon"
)

// Strict parses raw tool-call arguments: exactly one JSON object, optionally
// surrounded by white space, within lim (zero fields mean defaults). It
// returns the canonical JSON of the object (internal/canon) and the decoded value,
// whose numbers are json.Number so no digit is lost.
//
// Failures carry a code: CodeTooLarge (checked before any parsing),
// CodeTooDeep (checked before a container is entered, so deep input never
// builds deep structures), CodeTruncated (the input ends inside the
// document: an unclosed string, object or array, a dangling key, colon or
// comma), CodeEmpty (nothing but white space, unless lim.EmptyIsObject) and
// CodeInvalidJSON for everything else, including a top level that is not an
// object, trailing data, invalid UTF-8 and duplicate keys (refused rather
// than last-wins: ambiguous arguments must not execute). Strict never
// completes or repairs its input.
func Strict(raw []byte, lim Limits) (canonical []byte, value map[string]any, err *Error) {
	lim = lim.withDefaults()
	if len(raw) > lim.MaxBytes {
		return nil, nil, newError(CodeTooLarge, "the arguments are "+itoa(len(raw))+" bytes, more than the limit of "+itoa(lim.MaxBytes)+"; send smaller arguments or raise MaxBytes", raw, lim.MaxBytes)
	}
	d := decoder{data: raw, lim: lim}
	d.ws()
	if d.pos == len(raw) {
		if lim.EmptyIsObject {
			return []byte("{}"), map[string]any{}, nil
		}
		return nil, nil, newError(CodeEmpty, "the arguments are empty; a call without arguments sends {}", raw, d.pos)
	}
	if c := raw[d.pos]; c != '{' {
		return nil, nil, d.invalid("tool arguments must be a JSON object, found " + kindOf(c))
	}
	v, perr := d.value()
	if perr != nil {
		return nil, nil, perr
	}
	d.ws()
	if d.pos < len(raw) {
		return nil, nil, d.invalid("unexpected data after the arguments object; send exactly one JSON object")
	}
	m := v.(map[string]any)
	c, cerr := canon.Value(m)
	if cerr != nil {
		// Every value the decoder builds is encodable; this is a bug guard.
		return nil, nil, newError(CodeInvalidJSON, cerr.Error(), raw, 0)
	}
	return c, m, nil
}

// Value decodes the first JSON value of any kind at the start of raw (after
// white space) under lim and returns it with n, the number of bytes of raw
// it consumed. Bytes after the value are not examined, which lets a scanner
// find where a JSON value embedded in text ends. A value longer than
// lim.MaxBytes is CodeTooLarge.
func Value(raw []byte, lim Limits) (v any, n int, err *Error) {
	lim = lim.withDefaults()
	data := raw
	if len(data) > lim.MaxBytes {
		data = data[:lim.MaxBytes]
	}
	d := decoder{data: data, lim: lim}
	v, err = d.value()
	if err != nil {
		if err.Code == CodeTruncated && len(raw) > len(data) {
			return nil, 0, newError(CodeTooLarge, "the JSON value is longer than the limit of "+itoa(lim.MaxBytes)+" bytes", data, len(data))
		}
		return nil, 0, err
	}
	return v, d.pos, nil
}

func kindOf(c byte) string {
	switch {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	return quoteByte(c)
}
