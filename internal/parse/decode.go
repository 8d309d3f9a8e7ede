package parse

import (
	"encoding/json"
)

// decoder is a recursive-descent JSON decoder. Recursion is bounded by
// lim.MaxDepth, checked before a container is entered, so input nesting
// cannot grow the stack or the heap beyond the limit.
type decoder struct {
	data  []byte
	pos   int
	depth int
	lim   Limits
	buf   []byte // scratch for strings with escapes
}

func (d *decoder) invalid(msg string) *Error {
	return newError(CodeInvalidJSON, msg, d.data, d.pos)
}

func (d *decoder) truncated(msg string) *Error {
	return newError(CodeTruncated, "the JSON ends "+msg+"; truncated arguments are never completed or executed", d.data, len(d.data))
}

func (d *decoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value() (any, *Error) {
	d.ws()
	if d.pos >= len(d.data) {
		return nil, d.truncated("where a value should start")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	default:
		return nil, d.invalid("unexpected character " + quoteByte(c) + " where a value should start")
	}
}

func (d *decoder) enter() *Error {
	d.depth++
	if d.depth > d.lim.MaxDepth {
		return newError(CodeTooDeep, "objects and arrays are nested deeper than the limit of "+itoa(d.lim.MaxDepth)+"; flatten the arguments or raise MaxDepth", d.data, d.pos)
	}
	return nil
}

func (d *decoder) object() (any, *Error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.pos++ // '{'
	m := make(map[string]any)
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return m, nil
	}
	for {
		d.ws()
		if d.pos >= len(d.data) {
			return nil, d.truncated("inside an object, where a key should start")
		}
		if c := d.data[d.pos]; c != '"' {
			if c == '}' {
				return nil, d.invalid("trailing comma before '}'; remove it (or enable the trailing-comma repair)")
			}
			return nil, d.invalid("object keys must be double-quoted strings, found " + quoteByte(c))
		}
		keyAt := d.pos
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		key := k.(string)
		d.ws()
		if d.pos >= len(d.data) {
			return nil, d.truncated("after an object key, where ':' should follow")
		}
		if d.data[d.pos] != ':' {
			return nil, d.invalid("expected ':' after object key, found " + quoteByte(d.data[d.pos]))
		}
		d.pos++
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, newError(CodeInvalidJSON, "duplicate key "+quoteString(key)+"; ambiguous arguments are refused, send each key once", d.data, keyAt)
		}
		m[key] = v
		d.ws()
		if d.pos >= len(d.data) {
			return nil, d.truncated("inside an object, where ',' or '}' should follow")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			return m, nil
		default:
			return nil, d.invalid("expected ',' or '}' in object, found " + quoteByte(d.data[d.pos]))
		}
	}
}

func (d *decoder) array() (any, *Error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.pos++ // '['
	a := []any{}
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		return a, nil
	}
	for {
		d.ws()
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			return nil, d.invalid("trailing comma before ']'; remove it (or enable the trailing-comma repair)")
		}
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.ws()
		if d.pos >= len(d.data) {
			return nil, d.truncated("inside an array, where ',' or ']' should follow")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return a, nil
		default:
			return nil, d.invalid("expected ',' or ']' in array, found " + quoteByte(d.data[d.pos]))
		}
	}
}

func (d *decoder) literal(word string) *Error {
	rest := d.data[d.pos:]
	for i := 0; i < len(word); i++ {
		if i >= len(rest) {
			return d.truncated("inside the literal " + word)
		}
		if rest[i] != word[i] {
			d.pos += i
			return d.invalid("invalid literal; JSON spells them true, false and null")
		}
	}
	d.pos += len(word)
	return nil
}

func (d *decoder) number() (any, *Error) {
	start := d.pos
	p := d.pos
	n := len(d.data)
	digits := func() int {
		s := p
		for p < n && d.data[p] >= '0' && d.data[p] <= '9' {
			p++
		}
		return p - s
	}
	if d.data[p] == '-' {
		p++
	}
	if p >= n {
		return nil, d.truncated("inside a number")
	}
	switch {
	case d.data[p] == '0':
		p++
	case d.data[p] >= '1' && d.data[p] <= '9':
		digits()
	default:
		d.pos = p
		return nil, d.invalid("invalid number: a digit must follow '-'")
	}
	if p < n && d.data[p] == '.' {
		p++
		if p >= n {
			return nil, d.truncated("inside a number")
		}
		if digits() == 0 {
			d.pos = p
			return nil, d.invalid("invalid number: a digit must follow '.'")
		}
	}
	if p < n && (d.data[p] == 'e' || d.data[p] == 'E') {
		p++
		if p < n && (d.data[p] == '+' || d.data[p] == '-') {
			p++
		}
		if p >= n {
			return nil, d.truncated("inside a number")
		}
		if digits() == 0 {
			d.pos = p
			return nil, d.invalid("invalid number: a digit must follow the exponent")
		}
	}
	d.pos = p
	return json.Number(d.data[start:p]), nil
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(c) + "'"
	}
	return "byte 0x" + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])
}

func quoteString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
