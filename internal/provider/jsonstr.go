package provider

import (
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

var errBadString = errors.New("provider: argument fragment is not a JSON string")

// appendJSONString appends the content of the JSON string literal raw to dst.
// Unlike encoding/json it keeps raw bytes as they are instead of replacing
// invalid UTF-8 with U+FFFD, and it keeps a lone surrogate escape as its
// WTF-8 bytes, so argument fragments split inside a UTF-8 sequence or between
// the halves of a \uD83D\uDE00 pair join into the right text.
func appendJSONString(dst, raw []byte) ([]byte, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return dst, errBadString
	}
	s := raw[1 : len(raw)-1]
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			if c < 0x20 || c == '"' {
				return dst, errBadString
			}
			dst = append(dst, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return dst, errBadString
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if i+6 > len(s) {
				return dst, errBadString
			}
			r, ok := hex4(s[i+2 : i+6])
			if !ok {
				return dst, errBadString
			}
			dst = appendUTF16(dst, r)
			i += 6
			continue
		default:
			return dst, errBadString
		}
		i += 2
	}
	return dst, nil
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// appendUTF16 appends one \u code unit. A low surrogate joins a high one
// already at the end of dst; a lone surrogate is kept as WTF-8 bytes.
func appendUTF16(dst []byte, r rune) []byte {
	if r >= 0xDC00 && r <= 0xDFFF {
		if n := len(dst); n >= 3 && dst[n-3] == 0xED && dst[n-2]&0xF0 == 0xA0 {
			hi := 0xD000 | rune(dst[n-2]&0x3F)<<6 | rune(dst[n-1]&0x3F)
			return utf8.AppendRune(dst[:n-3], utf16.DecodeRune(hi, r))
		}
	}
	if r >= 0xD800 && r <= 0xDFFF {
		return append(dst, 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(dst, r)
}
