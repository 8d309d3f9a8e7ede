package parse

// Cosmetic selects the repairs Repair may apply. All are off by default; the
// parse gate enables them per tool.
type Cosmetic struct {
	TrailingCommas bool // [1, 2,] and {"a": 1,} lose the last comma
	Comments       bool // // line and /* block */ comments are removed
	SingleQuotes   bool // 'text' becomes "text"
	PythonLiterals bool // bare True, False, None become true, false, null
	UnquotedKeys   bool // {key: 1} becomes {"key": 1}
}

// Change kinds reported by Repair.
const (
	ChangeTrailingComma = "trailing_comma"
	ChangeComment       = "comment"
	ChangeSingleQuotes  = "single_quotes"
	ChangePythonLiteral = "python_literal"
	ChangeUnquotedKey   = "unquoted_key"
)

// Change is one edit made by Repair: the bytes Before at Offset in the input
// were replaced by After.
type Change struct {
	Kind   string
	Offset int
	Before string
	After  string
}

// Repair applies the enabled cosmetic fixes outside double-quoted strings and
// returns the fixed bytes with every change in input order. It never adds a
// closing quote, bracket or brace: an unterminated single-quoted string or
// block comment is left as it is, and a truncated document stays truncated.
// Repair does not validate; pass its output to Strict.
func Repair(raw []byte, opts Cosmetic) (fixed []byte, changes []Change) {
	out := make([]byte, 0, len(raw)+8)
	i := 0
	for i < len(raw) {
		c := raw[i]
		switch {
		case c == '"':
			j := endDoubleQuoted(raw, i)
			out = append(out, raw[i:j]...)
			i = j
			continue
		case c == '\'' && opts.SingleQuotes:
			j, s, ok := singleQuoted(raw, i)
			if !ok {
				// Unterminated: the opening quote is still converted when
				// the text simply ends, so Strict reports truncation.
				if j == len(raw) {
					out = append(out, s...)
					changes = append(changes, Change{ChangeSingleQuotes, i, string(raw[i:j]), string(s)})
				} else {
					out = append(out, raw[i:]...)
				}
				return out, changes
			}
			out = append(out, s...)
			changes = append(changes, Change{ChangeSingleQuotes, i, string(raw[i:j]), string(s)})
			i = j
			continue
		case c == '/' && opts.Comments && i+1 < len(raw) && (raw[i+1] == '/' || raw[i+1] == '*'):
			j, ok := commentEnd(raw, i)
			if !ok {
				return append(out, raw[i:]...), changes
			}
			changes = append(changes, Change{ChangeComment, i, string(raw[i:j]), ""})
			i = j
			continue
		case c == ',' && opts.TrailingCommas:
			k := skipSpace(raw, i+1, opts.Comments)
			if k < len(raw) && (raw[k] == '}' || raw[k] == ']') {
				changes = append(changes, Change{ChangeTrailingComma, i, ",", ""})
				i++
				continue
			}
		case isIdentStart(c) && (i == 0 || !isIdentPart(raw[i-1])):
			j := i + 1
			for j < len(raw) && isIdentPart(raw[j]) {
				j++
			}
			word := string(raw[i:j])
			after := skipSpace(raw, j, opts.Comments)
			if opts.UnquotedKeys && after < len(raw) && raw[after] == ':' && lastSignificant(out) != ':' && isKeyPosition(out) {
				q := `"` + word + `"`
				out = append(out, q...)
				changes = append(changes, Change{ChangeUnquotedKey, i, word, q})
				i = j
				continue
			}
			if lit := pythonLiteral(word); opts.PythonLiterals && lit != "" {
				out = append(out, lit...)
				changes = append(changes, Change{ChangePythonLiteral, i, word, lit})
				i = j
				continue
			}
			out = append(out, raw[i:j]...)
			i = j
			continue
		}
		out = append(out, c)
		i++
	}
	return out, changes
}

// endDoubleQuoted returns the index after the string starting at i, or
// len(raw) when it is unterminated.
func endDoubleQuoted(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// singleQuoted converts the single-quoted string at i into a double-quoted
// one: \' becomes ', a bare " is escaped, other escapes are kept. ok is
// false when the string is not closed on its line; then end is len(raw) and
// s the converted text without a closing quote if the input simply ended.
func singleQuoted(raw []byte, i int) (end int, s []byte, ok bool) {
	s = append(s, '"')
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; c {
		case '\\':
			if j+1 >= len(raw) {
				return len(raw), append(s, c), false
			}
			if raw[j+1] == '\'' {
				s = append(s, '\'')
			} else {
				s = append(s, c, raw[j+1])
			}
			j++
		case '"':
			s = append(s, '\\', '"')
		case '\'':
			return j + 1, append(s, '"'), true
		case '\n':
			return j, nil, false
		default:
			s = append(s, c)
		}
	}
	return len(raw), s, false
}

// commentEnd returns the end of the comment at i; a line comment ends before
// its newline. ok is false for an unterminated block comment.
func commentEnd(raw []byte, i int) (int, bool) {
	if raw[i+1] == '/' {
		for j := i + 2; j < len(raw); j++ {
			if raw[j] == '\n' {
				return j, true
			}
		}
		return len(raw), true
	}
	for j := i + 2; j+1 < len(raw); j++ {
		if raw[j] == '*' && raw[j+1] == '/' {
			return j + 2, true
		}
	}
	return 0, false
}

// skipSpace returns the first index at or after i that is neither white
// space nor, when comments is set, part of a terminated comment.
func skipSpace(raw []byte, i int, comments bool) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		case '/':
			if comments && i+1 < len(raw) && (raw[i+1] == '/' || raw[i+1] == '*') {
				if j, ok := commentEnd(raw, i); ok {
					i = j
					continue
				}
			}
		}
		return i
	}
	return i
}

func lastSignificant(out []byte) byte {
	for k := len(out) - 1; k >= 0; k-- {
		switch out[k] {
		case ' ', '\t', '\n', '\r':
		default:
			return out[k]
		}
	}
	return 0
}

// isKeyPosition reports whether a key may start here: after '{' or ','.
// A ',' inside an array also passes, which is harmless: a word followed by
// ':' there is invalid JSON either way.
func isKeyPosition(out []byte) bool {
	c := lastSignificant(out)
	return c == '{' || c == ','
}

func pythonLiteral(word string) string {
	switch word {
	case "True":
		return "true"
	case "False":
		return "false"
	case "None":
		return "null"
	}
	return ""
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '-'
}
