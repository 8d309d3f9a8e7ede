package parse

import (
	"unicode/utf16"
	"unicode/utf8"
)

// str decodes a string starting at the opening quote. Invalid UTF-8, raw
// control characters and lone surrogate escapes are refused with their
// offset: RFC 8259 requires UTF-8, and encoding/json's U+FFFD in their place
// would be text the model never wrote.
func (d *decoder) str() (any, *Error) {
	d.pos++ // opening quote
	start := d.pos
	// Fast path: no escapes.
	for p := d.pos; p < len(d.data); p++ {
		c := d.data[p]
		if c == '"' {
			d.pos = p + 1
			return string(d.data[start:p]), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	d.buf = d.buf[:0]
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(d.buf), nil
		case c < 0x20:
			return nil, d.invalid("raw control character in string; escape it (\\n, \\t, \\u00XX)")
		case c == '\\':
			if err := d.escape(); err != nil {
				return nil, err
			}
		case c < utf8.RuneSelf:
			d.buf = append(d.buf, c)
			d.pos++
		default:
			rest := d.data[d.pos:]
			if !utf8.FullRune(rest) {
				return nil, d.truncated("inside a multi-byte character in a string")
			}
			r, size := utf8.DecodeRune(rest)
			if r == utf8.RuneError && size == 1 {
				return nil, d.invalid("invalid UTF-8 (" + quoteByte(c) + ") in string; arguments must be UTF-8 (RFC 8259), nothing is replaced: send the text as UTF-8")
			}
			d.buf = append(d.buf, rest[:size]...)
			d.pos += size
		}
	}
	return nil, d.truncated("inside a string (no closing quote)")
}

func (d *decoder) escape() *Error {
	if d.pos+1 >= len(d.data) {
		return d.truncated("inside an escape sequence in a string")
	}
	c := d.data[d.pos+1]
	if r, ok := simpleEscape(c); ok {
		d.buf = append(d.buf, r)
		d.pos += 2
		return nil
	}
	if c != 'u' {
		d.pos++
		return d.invalid("invalid escape " + quoteString(`\`+string(c)) + " in string")
	}
	at := d.pos
	r, err := d.hex4(d.pos + 2)
	if err != nil {
		return err
	}
	d.pos += 6
	if utf16.IsSurrogate(r) {
		lone := true
		if r < 0xDC00 { // a high half: its low half must follow
			rest := d.data[d.pos:]
			if len(rest) == 0 || len(rest) == 1 && rest[0] == '\\' {
				return d.truncated("inside a \\u escape pair in a string")
			}
			if rest[0] == '\\' && rest[1] == 'u' {
				r2, err := d.hex4(d.pos + 2)
				if err != nil {
					return err
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					d.pos += 6
					r, lone = dec, false
				}
			}
		}
		if lone {
			d.pos = at
			return d.invalid("lone surrogate escape " + string(d.data[at:at+6]) + " in string; \\uD800-\\uDFFF escapes are only valid as a high-low pair (RFC 8259 §8.2), nothing is replaced: send the character itself or its pair")
		}
	}
	d.buf = utf8.AppendRune(d.buf, r)
	return nil
}

func (d *decoder) hex4(at int) (rune, *Error) {
	var r rune
	for i := 0; i < 4; i++ {
		if at+i >= len(d.data) {
			return 0, d.truncated("inside a \\u escape in a string")
		}
		c := d.data[at+i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			d.pos = at + i
			return 0, d.invalid("invalid hex digit in \\u escape")
		}
		r = r<<4 | rune(v)
	}
	return r, nil
}

func simpleEscape(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}
