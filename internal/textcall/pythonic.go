package textcall

import (
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/parse"
)

// pythonicLists recovers bracketed pythonic call lists in prose, the Llama
// 3.2 / pythonic format: [get_weather(city="Paris"), f2()]. Only keyword
// arguments are accepted; a list that does not parse is not a call.
func (r *recoverer) pythonicLists() {
	merged := mergeSpans(r.claimed)
	for i := 0; ; {
		k := strings.IndexByte(r.text[i:], '[')
		if k < 0 {
			return
		}
		p := i + k
		i = p + 1
		if !looksPythonic(r.text, p+1) {
			continue
		}
		if e, in := inSpans(merged, p); in {
			i = e
			continue
		}
		if next := r.pythonicAt("pythonic", p, -1, p, len(r.text), false); next > p {
			r.claim(p, next)
			i = next
		}
		if r.budget < 0 {
			return
		}
	}
}

// looksPythonic reports whether text[p:] starts with a name and '('.
func looksPythonic(text string, p int) bool {
	p = skipSpace(text, p)
	q := p
	for q < len(text) && isNameByte(text[q]) {
		q++
	}
	q2 := skipSpace(text, q)
	return q > p && q2 < len(text) && text[q2] == '(' && !(text[p] >= '0' && text[p] <= '9')
}

// pythonicAt parses a pythonic list of calls, or a single call, at
// text[p:to]. On success the calls are added and the end of the notation is
// returned. On failure a marker (inMarker) records a Discard and p is
// returned. The reported span is start..end, or start..next when end < 0.
func (r *recoverer) pythonicAt(format string, start, end, p, to int, inMarker bool) int {
	ps := &pyParser{s: r.text[:to], p: p}
	var calls []pyCall
	var err string
	if r.text[p] == '[' {
		calls, err = ps.list()
	} else {
		var c pyCall
		c, err = ps.call()
		calls = []pyCall{c}
	}
	if !r.spend(ps.p-p+1, p) {
		return p
	}
	if err != "" {
		if inMarker {
			r.discard(format, start, end, "pythonic call: "+err)
		}
		return p
	}
	if end < 0 {
		end = ps.p
	}
	for _, c := range calls {
		r.add(format, start, end, c.name, c.args)
	}
	return ps.p
}

type pyCall struct {
	name string
	args map[string]any
}

// pyParser reads the Python literal subset models write in calls: strings,
// numbers, True/False/None, lists, tuples and dicts, nested at most
// parse.DefaultMaxDepth deep. Errors are messages; "" means success.
//
// literal (pyLiteral) narrows it to Python's own literals: no tuples, no
// JSON true/false/null, and Python's other escapes decoded (pyEscape).
type pyParser struct {
	s       string
	p       int
	depth   int
	literal bool
}

func (ps *pyParser) ws() { ps.p = skipSpace(ps.s, ps.p) }

func (ps *pyParser) eat(c byte) bool {
	ps.ws()
	if ps.p < len(ps.s) && ps.s[ps.p] == c {
		ps.p++
		return true
	}
	return false
}

func (ps *pyParser) list() ([]pyCall, string) {
	ps.p++ // '['
	var calls []pyCall
	for {
		if ps.eat(']') {
			if len(calls) == 0 {
				return nil, "empty list of calls"
			}
			return calls, ""
		}
		c, err := ps.call()
		if err != "" {
			return nil, err
		}
		calls = append(calls, c)
		if !ps.eat(',') && !ps.peek(']') {
			return nil, ps.unexpected("',' or ']' after a call")
		}
	}
}

func (ps *pyParser) peek(c byte) bool {
	ps.ws()
	return ps.p < len(ps.s) && ps.s[ps.p] == c
}

func (ps *pyParser) unexpected(want string) string {
	if ps.p >= len(ps.s) {
		return "truncated: the text ends where " + want + " should be"
	}
	return "expected " + want + " at byte " + itoa(ps.p)
}

func (ps *pyParser) name() string {
	ps.ws()
	q := ps.p
	for q < len(ps.s) && isNameByte(ps.s[q]) {
		q++
	}
	n := ps.s[ps.p:q]
	ps.p = q
	return n
}

func (ps *pyParser) call() (pyCall, string) {
	name := ps.name()
	if name == "" {
		return pyCall{}, ps.unexpected("a function name")
	}
	if !ps.eat('(') {
		return pyCall{}, ps.unexpected("'(' after " + name)
	}
	args := map[string]any{}
	for !ps.eat(')') {
		key := ps.name()
		if key == "" || !ps.eat('=') {
			if key != "" && ps.p >= len(ps.s) {
				return pyCall{}, ps.unexpected("'='")
			}
			return pyCall{}, "only keyword arguments are supported (name=value), in the call of " + name
		}
		v, err := ps.value()
		if err != "" {
			return pyCall{}, err
		}
		if _, dup := args[key]; dup {
			return pyCall{}, "duplicate argument " + key + " in the call of " + name
		}
		args[key] = v
		if !ps.eat(',') && !ps.peek(')') {
			return pyCall{}, ps.unexpected("',' or ')' in the call of " + name)
		}
	}
	return pyCall{name: name, args: args}, ""
}

func (ps *pyParser) value() (any, string) {
	ps.ws()
	if ps.p >= len(ps.s) {
		return nil, ps.unexpected("a value")
	}
	switch c := ps.s[ps.p]; {
	case c == '\'' || c == '"':
		return ps.str(c)
	case c == '[':
		return ps.seq(']')
	case c == '(' && !ps.literal:
		return ps.seq(')')
	case c == '{':
		return ps.dict()
	case c == '-' || c >= '0' && c <= '9':
		v, n, err := parse.Value([]byte(ps.s[ps.p:min(len(ps.s), ps.p+64)]), parse.DefaultLimits())
		if err != nil {
			return nil, "invalid number at byte " + itoa(ps.p)
		}
		ps.p += n
		return v, ""
	}
	switch word := ps.name(); {
	case word == "True" || word == "true" && !ps.literal:
		return true, ""
	case word == "False" || word == "false" && !ps.literal:
		return false, ""
	case word == "None" || word == "null" && !ps.literal:
		return nil, ""
	case word == "":
		return nil, ps.unexpected("a value")
	default:
		return nil, "unsupported value " + word
	}
}

func (ps *pyParser) enter() string {
	ps.depth++
	if ps.depth > parse.DefaultMaxDepth {
		return "nested deeper than " + itoa(parse.DefaultMaxDepth)
	}
	return ""
}

func (ps *pyParser) seq(closer byte) (any, string) {
	if err := ps.enter(); err != "" {
		return nil, err
	}
	ps.p++
	out := []any{}
	for !ps.eat(closer) {
		v, err := ps.value()
		if err != "" {
			return nil, err
		}
		out = append(out, v)
		if !ps.eat(',') && !ps.peek(closer) {
			return nil, ps.unexpected("',' or '" + string(closer) + "'")
		}
	}
	ps.depth--
	return out, ""
}

func (ps *pyParser) dict() (any, string) {
	if err := ps.enter(); err != "" {
		return nil, err
	}
	ps.p++
	out := map[string]any{}
	for !ps.eat('}') {
		ps.ws()
		if ps.p >= len(ps.s) || (ps.s[ps.p] != '\'' && ps.s[ps.p] != '"') {
			return nil, ps.unexpected("a string key")
		}
		k, err := ps.str(ps.s[ps.p])
		if err != "" {
			return nil, err
		}
		if !ps.eat(':') {
			return nil, ps.unexpected("':'")
		}
		v, err := ps.value()
		if err != "" {
			return nil, err
		}
		if _, dup := out[k.(string)]; dup {
			return nil, "duplicate key " + k.(string)
		}
		out[k.(string)] = v
		if !ps.eat(',') && !ps.peek('}') {
			return nil, ps.unexpected("',' or '}'")
		}
	}
	ps.depth--
	return out, ""
}

// str reads a Python string literal; \' \" \\ \n \t \r \uXXXX are decoded,
// other backslashes are kept.
func (ps *pyParser) str(q byte) (any, string) {
	var b strings.Builder
	for i := ps.p + 1; i < len(ps.s); i++ {
		c := ps.s[i]
		switch {
		case c == q:
			ps.p = i + 1
			if !utf8.ValidString(b.String()) {
				return nil, "invalid UTF-8 in a string"
			}
			return b.String(), ""
		case c == '\n':
			return nil, "newline inside a string at byte " + itoa(i)
		case c == '\\' && i+1 < len(ps.s):
			i++
			switch e := ps.s[i]; e {
			case '\'', '"', '\\':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'u':
				v, _, err := parse.Value([]byte(`"\`+ps.s[i:min(len(ps.s), i+5)]+`"`), parse.DefaultLimits())
				if err != nil {
					return nil, "invalid \\u escape at byte " + itoa(i)
				}
				b.WriteString(v.(string))
				i += 4
			default:
				if ps.literal {
					text, last, ok, err := pyEscape(ps.s, i)
					if err != "" {
						return nil, err
					}
					if ok {
						b.WriteString(text)
						i = last
						continue
					}
				}
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	ps.p = len(ps.s)
	return nil, "truncated: a string is not closed"
}
