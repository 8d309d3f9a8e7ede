package canon

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// encoder writes canonical JSON. For valid UTF-8 it writes exactly what
// encoding/json writes with SetEscapeHTML(false) (sorted keys, \b \f \n \r
// \t, \u00XX for other control bytes, \u2028 and \u2029 escaped), so
// canonical forms stored before stay the same.
type encoder struct {
	buf    []byte
	strict bool // refuse invalid UTF-8 instead of copying it
}

func (e *encoder) value(v any) error {
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case string:
		return e.str(x)
	case json.Number:
		if x == "" {
			x = "0" // as encoding/json writes it
		}
		if !validNumber(string(x)) {
			return fmt.Errorf("canon: invalid number literal %q", string(x))
		}
		e.buf = append(e.buf, x...)
	case map[string]any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		e.buf = append(e.buf, '{')
		for i, k := range keys {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.str(k); err != nil {
				return err
			}
			e.buf = append(e.buf, ':')
			if err := e.value(x[k]); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
	case []any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		e.buf = append(e.buf, '[')
		for i, el := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(el); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	default:
		// Other Go values (numbers, structs, typed maps) take their
		// encoding/json form, then the canonical form of that.
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("canon: %w", err)
		}
		c, err := JSON(b)
		if err != nil {
			return err
		}
		e.buf = append(e.buf, c...)
	}
	return nil
}

const hex = "0123456789abcdef"

func (e *encoder) str(s string) error {
	if e.strict && !utf8.ValidString(s) {
		i := invalidAt(s)
		return fmt.Errorf("%w: string %q has an invalid byte 0x%02x at byte %d", ErrInvalidUTF8, clip(s, i), s[i], i)
	}
	b := append(e.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			start = i + size
		}
		// An invalid byte (Exact only) is copied with the text around it.
		i += size
	}
	b = append(b, s[start:]...)
	e.buf = append(b, '"')
	return nil
}

func invalidAt(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(s)
}

// clip is s up to byte i and a little after, for an error message.
func clip(s string, i int) string {
	if i > 24 {
		s, i = s[i-24:], 24
	}
	return s[:min(len(s), i+8)]
}

// validNumber reports whether s is exactly a JSON number literal.
func validNumber(s string) bool {
	i, n := 0, len(s)
	digits := func() int {
		d := i
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - d
	}
	if i < n && s[i] == '-' {
		i++
	}
	switch {
	case i < n && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < n && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < n && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == n
}
