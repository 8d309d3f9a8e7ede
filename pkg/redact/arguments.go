package redact

import (
	"bytes"
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
// number goes through Text. A number that Text changes (a card number)
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

type walker struct {
	dec  *json.Decoder
	out  strings.Builder
	m    matcher
	path []string
}

var errUnexpectedToken = errors.New("redact: unexpected JSON token")

func redactJSON(raw []byte, m matcher) (string, error) {
	w := &walker{dec: json.NewDecoder(bytes.NewReader(raw)), m: m}
	w.dec.UseNumber()
	w.out.Grow(len(raw))
	tok, err := w.dec.Token()
	if err != nil {
		return "", err
	}
	if err := w.emit(tok); err != nil {
		return "", err
	}
	return w.out.String(), nil
}

// emit writes the value that starts with tok.
func (w *walker) emit(tok json.Token) error {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return w.object()
		}
		if v == '[' {
			return w.array()
		}
		return errUnexpectedToken
	case string:
		writeQuoted(&w.out, Text(v))
	case json.Number:
		if r := Text(string(v)); r != string(v) {
			writeQuoted(&w.out, r)
		} else {
			w.out.WriteString(r)
		}
	case bool:
		w.out.WriteString(strconv.FormatBool(v))
	case nil:
		w.out.WriteString("null")
	default:
		return errUnexpectedToken
	}
	return nil
}

func (w *walker) object() error {
	w.out.WriteByte('{')
	for i := 0; w.dec.More(); i++ {
		kt, err := w.dec.Token()
		if err != nil {
			return err
		}
		key, ok := kt.(string)
		if !ok {
			return errUnexpectedToken
		}
		if i > 0 {
			w.out.WriteByte(',')
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
	if _, err := w.dec.Token(); err != nil {
		return err
	}
	w.out.WriteByte('}')
	return nil
}

func (w *walker) array() error {
	w.out.WriteByte('[')
	for i := 0; w.dec.More(); i++ {
		if i > 0 {
			w.out.WriteByte(',')
		}
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		if len(w.m.pointers) == 0 {
			err = w.emit(tok)
		} else {
			w.path = append(w.path, strconv.Itoa(i))
			if w.m.sensitive("", w.path) {
				err = w.redacted(tok)
			} else {
				err = w.emit(tok)
			}
			w.path = w.path[:len(w.path)-1]
		}
		if err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return err
	}
	w.out.WriteByte(']')
	return nil
}

// member writes the value of the member key, whose path is w.path.
func (w *walker) member(key string) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	if w.m.sensitive(key, w.path) {
		return w.redacted(tok)
	}
	if s, ok := tok.(string); ok && isKeyLikeName(key) && looksRandom(s) {
		writeQuoted(&w.out, Placeholder)
		return nil
	}
	return w.emit(tok)
}

// redacted writes Placeholder for the value starting with tok and skips
// the rest of it; null and "" are written as they are.
func (w *walker) redacted(tok json.Token) error {
	switch v := tok.(type) {
	case nil:
		w.out.WriteString("null")
		return nil
	case string:
		if v == "" {
			w.out.WriteString(`""`)
			return nil
		}
	case json.Delim:
		for depth := 1; depth > 0; {
			t, err := w.dec.Token()
			if err != nil {
				return err
			}
			if d, ok := t.(json.Delim); ok {
				if d == '{' || d == '[' {
					depth++
				} else {
					depth--
				}
			}
		}
	}
	writeQuoted(&w.out, Placeholder)
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
