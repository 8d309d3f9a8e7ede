package redact

import (
	"math"
	"regexp"
	"strings"
)

// pairNameRe finds "name:" and "name=" in text: JSON members ("name": or,
// inside an escaped JSON string, \"name\":), quoted names and bare names
// (password=..., Authorization: ...).
var pairNameRe = regexp.MustCompile(`(?:\\?"([A-Za-z0-9_.\- ]{1,64})\\?"|'([A-Za-z0-9_.\- ]{1,64})'|([A-Za-z_][A-Za-z0-9_.\-]{0,63}))\s*[:=]\s*`)

// bareValueRe is an unquoted value, with its auth scheme when it has one.
var bareValueRe = regexp.MustCompile(`^(?i:(?:bearer|basic|token|digest)\s+)?[^\s"',;&}\])]+`)

// redactPairs masks the values that follow secret-like names in s (and
// names in extra), and random-looking values that follow key-like names.
// It reads text that need not be valid JSON: a value cut off by the end of s
// is masked up to the end.
func redactPairs(s string, extra map[string]bool) string {
	var b strings.Builder
	last, pos := 0, 0
	for pos < len(s) {
		loc := pairNameRe.FindStringSubmatchIndex(s[pos:])
		if loc == nil {
			break
		}
		var name string
		for g := 1; g <= 3; g++ {
			if loc[2*g] >= 0 {
				name = s[pos+loc[2*g] : pos+loc[2*g+1]]
				break
			}
		}
		vstart := pos + loc[1]
		pos = vstart
		secret := isSecretName(name) || extra[strings.ToLower(name)]
		if !secret && !isKeyLikeName(name) {
			continue
		}
		vs, ve := valueSpan(s, vstart)
		if ve <= vs || strings.HasPrefix(s[vs:], Placeholder) {
			continue
		}
		if !secret && !looksRandom(s[vs:ve]) {
			continue
		}
		b.WriteString(s[last:vs])
		b.WriteString(Placeholder)
		last, pos = ve, ve
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
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
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		case isDigit(c):
			digits = true
		case ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
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
