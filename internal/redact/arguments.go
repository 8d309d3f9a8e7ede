package redact

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Arguments returns a redacted copy of raw tool-call argument text, safe
// for logs and audit events.
//
// When raw is valid JSON the value is walked and its structure kept (member
// order too): the value of a sensitive member — named in opts, or with a
// secret-like name such as password, token, api_key, client_secret — is
// replaced by "[REDACTED]" whatever its type (null and "" are kept, since
// they hold nothing); a random-looking string after a key-like name
// (signing_key, x-auth) is replaced; every other string, member name and
// number goes through Text (string values with the names of opts added, for
// JSON embedded in a string). A number that Text changes (a card number)
// becomes a string.
//
// When raw is not valid JSON (truncated or malformed arguments) the text is
// scanned as Text does, with the names of opts added, so a secret is masked
// even when its value was cut off. Arguments never panics.
func Arguments(raw []byte, opts Options) string {
	m := newMatcher(opts)
	if json.Valid(raw) {
		if out, err := redactJSON(raw, m); err == nil {
			return out
		}
	}
	return redactText(string(raw), m.textNames())
}

// walker re-writes one valid JSON document (json.Valid has passed), so it
// can read the bytes directly instead of through a json.Decoder.
type walker struct {
	raw   []byte
	pos   int
	out   strings.Builder
	m     matcher
	names map[string]bool // m's names for text inside strings
	path  []string
}

var errUnexpected = errors.New("redact: unexpected JSON input")

func redactJSON(raw []byte, m matcher) (string, error) {
	w := &walker{raw: raw, m: m, names: m.textNames()}
	w.out.Grow(len(raw))
	if err := w.value(); err != nil {
		return "", err
	}
	return w.out.String(), nil
}

func (w *walker) skipSpace() {
	for w.pos < len(w.raw) && isSpace(w.raw[w.pos]) {
		w.pos++
	}
}

// value writes the value at w.pos, redacting what it recognises.
func (w *walker) value() error {
	w.skipSpace()
	if w.pos >= len(w.raw) {
		return errUnexpected
	}
	switch c := w.raw[w.pos]; {
	case c == '{':
		return w.object()
	case c == '[':
		return w.array()
	case c == '"':
		str, err := w.str()
		if err != nil {
			return err
		}
		writeQuoted(&w.out, redactText(str, w.names))
	default:
		lit := w.literal()
		if lit == "" {
			return errUnexpected
		}
		if r := Text(lit); r != lit {
			writeQuoted(&w.out, r)
		} else {
			w.out.WriteString(lit)
		}
	}
	return nil
}

// literal consumes a number, true, false or null.
func (w *walker) literal() string {
	start := w.pos
	for w.pos < len(w.raw) {
		c := w.raw[w.pos]
		if !isLetter(c) && !isDigit(c) && c != '-' && c != '+' && c != '.' {
			break
		}
		w.pos++
	}
	return string(w.raw[start:w.pos])
}

// str consumes a string and returns its decoded value.
func (w *walker) str() (string, error) {
	start := w.pos
	escaped := false
	for w.pos++; w.pos < len(w.raw); w.pos++ {
		switch w.raw[w.pos] {
		case '\\':
			escaped = true
			w.pos++
		case '"':
			w.pos++
			lit := w.raw[start:w.pos]
			if !escaped {
				return string(lit[1 : len(lit)-1]), nil
			}
			var v string
			if err := json.Unmarshal(lit, &v); err != nil {
				return "", err
			}
			return v, nil
		}
	}
	return "", errUnexpected
}

// next skips white space and consumes c when it comes next.
func (w *walker) next(c byte) bool {
	w.skipSpace()
	if w.pos < len(w.raw) && w.raw[w.pos] == c {
		w.pos++
		return true
	}
	return false
}

func (w *walker) object() error {
	w.pos++ // '{'
	w.out.WriteByte('{')
	for i := 0; !w.next('}'); i++ {
		if i > 0 {
			if !w.next(',') {
				return errUnexpected
			}
			w.out.WriteByte(',')
			w.skipSpace()
		}
		if w.pos >= len(w.raw) || w.raw[w.pos] != '"' {
			return errUnexpected
		}
		key, err := w.str()
		if err != nil {
			return err
		}
		if !w.next(':') {
			return errUnexpected
		}
		writeQuoted(&w.out, Text(key))
		w.out.WriteByte(':')
		w.path = append(w.path, key)
		err = w.member(key)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err
		}
	}
	w.out.WriteByte('}')
	return nil
}

func (w *walker) array() error {
	w.pos++ // '['
	w.out.WriteByte('[')
	for i := 0; !w.next(']'); i++ {
		if i > 0 {
			if !w.next(',') {
				return errUnexpected
			}
			w.out.WriteByte(',')
		}
		var err error
		if len(w.m.pointers) == 0 {
			err = w.value()
		} else {
			w.path = append(w.path, strconv.Itoa(i))
			if w.m.sensitive("", w.path) {
				err = w.redacted()
			} else {
				err = w.value()
			}
			w.path = w.path[:len(w.path)-1]
		}
		if err != nil {
			return err
		}
	}
	w.out.WriteByte(']')
	return nil
}

// member writes the value of the member key, whose path is w.path.
func (w *walker) member(key string) error {
	if w.m.sensitive(key, w.path) {
		return w.redacted()
	}
	w.skipSpace()
	if isKeyLikeName(key) && w.pos < len(w.raw) && w.raw[w.pos] == '"' {
		start := w.pos
		s, err := w.str()
		if err != nil {
			return err
		}
		if looksRandom(s) {
			writeQuoted(&w.out, Placeholder)
			return nil
		}
		w.pos = start
	}
	return w.value()
}

// redacted writes Placeholder for the value at w.pos and skips it; null
// and "" are written as they are.
func (w *walker) redacted() error {
	w.skipSpace()
	start := w.pos
	if err := w.skip(); err != nil {
		return err
	}
	if v := string(w.raw[start:w.pos]); v == "null" || v == `""` {
		w.out.WriteString(v)
		return nil
	}
	writeQuoted(&w.out, Placeholder)
	return nil
}

// skip consumes one value without writing it.
func (w *walker) skip() error {
	if w.pos >= len(w.raw) {
		return errUnexpected
	}
	switch w.raw[w.pos] {
	case '"':
		_, err := w.str()
		return err
	case '{', '[':
		depth := 0
		for ; w.pos < len(w.raw); w.pos++ {
			switch w.raw[w.pos] {
			case '"':
				if _, err := w.str(); err != nil {
					return err
				}
				w.pos--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					w.pos++
					return nil
				}
			}
		}
		return errUnexpected
	}
	if w.literal() == "" {
		return errUnexpected
	}
	return nil
}

// writeQuoted writes s as a JSON string without HTML escaping; invalid
// UTF-8 becomes U+FFFD.
func writeQuoted(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\ufffd`)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}
