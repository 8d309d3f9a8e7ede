package redact

import (
	"math"
	"regexp"
	"strings"
)

// bareValueRe is an unquoted value, with its auth scheme when it has one.
var bareValueRe = regexp.MustCompile(`^(?i:(?:bearer|basic|token|digest)\s+)?[^\s"',;&}\])]+`)

// maxNameLen bounds the field names redactPairs looks at.
const maxNameLen = 64

// redactPairs masks the values that follow secret-like names in s (and
// names in extra), and random-looking values that follow key-like names.
// A name is a JSON member name ("name": or, inside an escaped JSON string,
// \"name\":), a single-quoted name, or a bare word (password=...,
// Authorization: ...), followed by ':' or '='. It reads text that need not
// be valid JSON: a value cut off by the end of s is masked up to the end.
func redactPairs(s string, extra map[string]bool) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c != ':' && c != '=') || i < last {
			continue
		}
		name := nameBefore(s, i)
		if name == "" {
			continue
		}
		secret := isSecretName(name) || extra[strings.ToLower(name)]
		if !secret && !isKeyLikeName(name) {
			continue
		}
		vs, ve := valueSpan(s, skipSpace(s, i+1))
		if ve <= vs || strings.HasPrefix(s[vs:], Placeholder) {
			continue
		}
		if !secret && !looksRandom(s[vs:ve]) {
			continue
		}
		b.WriteString(s[last:vs])
		b.WriteString(Placeholder)
		last = ve
		i = ve - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// nameBefore returns the field name that ends just before the separator
// at sep (white space allowed between), or "" when there is none.
func nameBefore(s string, sep int) string {
	j := sep - 1
	for j >= 0 && isSpace(s[j]) {
		j--
	}
	if j < 0 {
		return ""
	}
	if q := s[j]; q == '"' || q == '\'' {
		end := j
		if j > 0 && s[j-1] == '\\' {
			end = j - 1
		}
		k := end - 1
		for k >= 0 && end-k <= maxNameLen+1 && (isNameChar(s[k]) || s[k] == ' ') {
			k--
		}
		if k < 0 || s[k] != q || k == end-1 {
			return ""
		}
		return s[k+1 : end]
	}
	k := j
	for k >= 0 && j-k < maxNameLen && isNameChar(s[k]) {
		k--
	}
	name := s[k+1 : j+1]
	for name != "" && !isLetter(name[0]) && name[0] != '_' {
		name = name[1:]
	}
	return name
}

func isNameChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '.' || c == '-'
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// valueSpan returns the byte range of the value that starts at p: the
// inside of a quoted string (to the closing quote or the end of s), a whole
// object or array, or a bare word (with its auth scheme). An empty range
// means there is no value to mask.
func valueSpan(s string, p int) (int, int) {
	if p >= len(s) {
		return p, p
	}
	switch c := s[p]; {
	case c == '"' || c == '\'':
		return p + 1, closeQuote(s, p+1, c)
	case c == '\\' && p+1 < len(s) && s[p+1] == '"':
		// A value inside an escaped JSON string: \"value\".
		if i := strings.Index(s[p+2:], `\"`); i >= 0 {
			return p + 2, p + 2 + i
		}
		return p + 2, len(s)
	case c == '{' || c == '[':
		return p, closeBracket(s, p)
	}
	loc := bareValueRe.FindStringIndex(s[p:])
	if loc == nil {
		return p, p
	}
	return p, p + loc[1]
}

// closeQuote returns the index of the quote q that closes a string whose
// content starts at i, or len(s) when the string is cut off.
func closeQuote(s string, i int, q byte) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i
		}
	}
	return len(s)
}

// closeBracket returns the index just past the bracket that closes the
// object or array opening at p, or len(s) when it is cut off.
func closeBracket(s string, p int) int {
	depth := 0
	for i := p; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = closeQuote(s, i+1, '"')
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// looksRandom reports whether v looks like a generated key or token: at
// least 16 characters, no white space, letters and digits mixed, and a
// Shannon entropy of at least 3 bits per character.
func looksRandom(v string) bool {
	if len(v) < 16 {
		return false
	}
	var counts [256]int
	letters, digits := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isSpace(c):
			return false
		case isDigit(c):
			digits = true
		case isLetter(c):
			letters = true
		}
		counts[c]++
	}
	if !letters || !digits {
		return false
	}
	entropy := 0.0
	n := float64(len(v))
	for _, k := range counts {
		if k > 0 {
			p := float64(k) / n
			entropy -= p * math.Log2(p)
		}
	}
	return entropy >= 3
}
