package textcall

// pyLiteral reads one Python literal, a dict or a list, at text[p:to], the
// way Python's ast.literal_eval would and nothing more: dicts with string
// keys, lists, strings ('…' or "…", with Python's escapes), ints, floats,
// True, False and None. Tuples, sets, names, calls, JSON's true/false/null
// and string prefixes are errors. Models trained on Python write their
// call (Hermes-2-Pro's {'name': …, 'arguments': {…}}) or its arguments
// (Kimi K2) as one; it is read only where JSON failed. It returns the value,
// the index after it, and an error message ("" on success).
func pyLiteral(text string, p, to int) (any, int, string) {
	ps := &pyParser{s: text[:to], p: p, literal: true}
	ps.ws()
	if ps.p >= len(ps.s) || ps.s[ps.p] != '{' && ps.s[ps.p] != '[' {
		return nil, ps.p, ps.unexpected("a Python dict or list")
	}
	v, err := ps.value()
	if err != "" {
		return nil, ps.p, err
	}
	return v, ps.p, ""
}

// pyEscape decodes the Python escape \e at s[i] (s[i-1] is the backslash)
// that the pythonic dialects keep as written: \x, \U, \a, \b, \f, \v,
// octal and a backslash before a newline. It returns the text, the index of the escape's last byte, whether
// it was one of these and an error message; \N{…} is refused.
func pyEscape(s string, i int) (string, int, bool, string) {
	hex := func(n int) (string, int, bool, string) {
		if i+n >= len(s) {
			return "", i, true, "truncated: an escape at byte " + itoa(i) + " is cut"
		}
		v := 0
		for _, c := range []byte(s[i+1 : i+1+n]) {
			switch {
			case c >= '0' && c <= '9':
				v = v*16 + int(c-'0')
			case c >= 'a' && c <= 'f':
				v = v*16 + int(c-'a'+10)
			case c >= 'A' && c <= 'F':
				v = v*16 + int(c-'A'+10)
			default:
				return "", i, true, "invalid \\" + string(s[i]) + " escape at byte " + itoa(i)
			}
		}
		if v > 0x10FFFF || v >= 0xD800 && v <= 0xDFFF {
			return "", i, true, "invalid code point in the escape at byte " + itoa(i)
		}
		return string(rune(v)), i + n, true, ""
	}
	switch e := s[i]; {
	case e == 'x':
		return hex(2)
	case e == 'U':
		return hex(8)
	case e == 'a':
		return "\a", i, true, ""
	case e == 'b':
		return "\b", i, true, ""
	case e == 'f':
		return "\f", i, true, ""
	case e == 'v':
		return "\v", i, true, ""
	case e >= '0' && e <= '7':
		v, j := 0, i
		for ; j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7'; j++ {
			v = v*8 + int(s[j]-'0')
		}
		return string(rune(v)), j - 1, true, ""
	case e == '\n':
		return "", i, true, "" // a line continuation
	case e == 'N':
		return "", i, true, "\\N{…} escapes are not supported (byte " + itoa(i) + ")"
	}
	return "", i, false, ""
}
