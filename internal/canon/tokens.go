package canon

import (
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// member is one name and value of an object being written: its key and
// where "key":value sits in the encoder's buffer.
type member struct {
	key        string
	start, end int
}

// fromTokens writes the canonical form of the one value dec holds, read
// token by token in a single pass. dec is strict (jsontext's defaults: UTF-8
// only, no lone surrogate, no duplicate name), so what it reads is exact;
// any error is dec's, and JSON classifies it.
func (e *encoder) fromTokens(dec *jsontext.Decoder, scratch *[]member) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case '{':
		return e.object(dec, scratch)
	case '[':
		e.buf = append(e.buf, '[')
		for i := 0; dec.PeekKind() != ']'; i++ {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.fromTokens(dec, scratch); err != nil {
				return err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		e.buf = append(e.buf, ']')
	case '"':
		return e.str(tok.String())
	case '0', 't', 'f', 'n':
		e.buf = append(e.buf, tok.String()...) // the literal as written
	default:
		return fmt.Errorf("canon: unexpected %v", tok.Kind())
	}
	return nil
}

// object writes the members of the object whose '{' was just read, sorted
// by name as encoding/json sorts map keys (bytewise). Members are written as
// they come; only an object whose names were out of order is rebuilt.
func (e *encoder) object(dec *jsontext.Decoder, scratch *[]member) error {
	base := len(e.buf)
	e.buf = append(e.buf, '{')
	mark := len(*scratch)
	defer func() { *scratch = (*scratch)[:mark] }()
	sorted := true
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.Kind() != '"' {
			return fmt.Errorf("canon: object name is %v", tok.Kind())
		}
		if len(*scratch) > mark {
			e.buf = append(e.buf, ',')
		}
		m := member{key: tok.String(), start: len(e.buf)}
		if err := e.str(m.key); err != nil {
			return err
		}
		e.buf = append(e.buf, ':')
		if err := e.fromTokens(dec, scratch); err != nil {
			return err
		}
		m.end = len(e.buf)
		if n := len(*scratch); n > mark && (*scratch)[n-1].key > m.key {
			sorted = false
		}
		*scratch = append(*scratch, m)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if !sorted {
		ms := (*scratch)[mark:]
		body := slices.Clone(e.buf[base:])
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		e.buf = append(e.buf[:base], '{')
		for i, m := range ms {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(e.buf, body[m.start-base:m.end-base]...)
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// oneValueLeft reports an error when dec holds anything after the value it
// just read.
func oneValueLeft(dec *jsontext.Decoder) error {
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			return errors.New("more than one JSON value")
		}
		return err
	}
	return nil
}
