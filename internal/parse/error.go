package parse

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Failure codes. They are also the failure codes the parse gate records;
// the two that are call statuses are wire's.
const (
	CodeInvalidJSON  = string(wire.InvalidJSON)
	CodeTruncated    = string(wire.Truncated)
	CodeTooLarge     = "too_large"
	CodeTooDeep      = "too_deep"
	CodeTooManyCalls = "too_many_calls"
	CodeEmpty        = "empty_arguments"
)

// excerptRadius is how many bytes of context an excerpt keeps on each side.
const excerptRadius = 20

// Marker is inserted into Error.Excerpt at the failing byte.
const Marker = ">>HERE<<"

// Error says why arguments were refused and where. Offset is a byte offset
// into the input; Line and Column are 1-based, Column counts bytes. Excerpt
// is about 40 bytes around Offset, with Marker at the failing point and
// control characters escaped so it fits on one log line.
type Error struct {
	Code    string
	Message string
	Offset  int
	Line    int
	Column  int
	Excerpt string
}

// Error implements error: "parse: <code>: <message> at line L, column C (byte O)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("parse: ")
	b.WriteString(e.Code)
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.Line > 0 {
		b.WriteString(" at line ")
		b.WriteString(itoa(e.Line))
		b.WriteString(", column ")
		b.WriteString(itoa(e.Column))
		b.WriteString(" (byte ")
		b.WriteString(itoa(e.Offset))
		b.WriteString(")")
	}
	if e.Excerpt != "" {
		b.WriteString(": ")
		b.WriteString(e.Excerpt)
	}
	return b.String()
}

// newError builds an Error located at off in data.
func newError(code, msg string, data []byte, off int) *Error {
	if off > len(data) {
		off = len(data)
	}
	line, col := 1, 1
	for i := 0; i < off; i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &Error{Code: code, Message: msg, Offset: off, Line: line, Column: col, Excerpt: excerpt(data, off)}
}

// excerpt returns the bytes around off with Marker inserted, cut on rune
// boundaries.
func excerpt(data []byte, off int) string {
	lo, hi := off-excerptRadius, off+excerptRadius
	if lo < 0 {
		lo = 0
	}
	if hi > len(data) {
		hi = len(data)
	}
	// To rune boundaries, by at most a rune's length: invalid UTF-8 can be
	// continuation bytes all the way.
	for n := 0; n < utf8.UTFMax-1 && lo > 0 && lo < len(data) && !utf8.RuneStart(data[lo]); n++ {
		lo--
	}
	for n := 0; n < utf8.UTFMax-1 && hi < len(data) && !utf8.RuneStart(data[hi]); n++ {
		hi++
	}
	var b strings.Builder
	if lo > 0 {
		b.WriteString("…")
	}
	writeEscaped(&b, data[lo:off])
	b.WriteString(Marker)
	writeEscaped(&b, data[off:hi])
	if hi < len(data) {
		b.WriteString("…")
	}
	return b.String()
}

func writeEscaped(b *strings.Builder, p []byte) {
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && n == 1, r < 0x20, r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(p[0])|0x100, 16)[1:])
		default:
			b.Write(p[:n])
		}
		p = p[n:]
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
