package textcall

import (
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/canon"
	"github.com/toolgate/toolgate/internal/parse"
)

// gemmaNotation is one of Gemma's function-call token sets: the tokens
// around a call and the token that delimits its strings.
type gemmaNotation struct{ open, close, quote string }

// gemmaNotations are FunctionGemma's (google/functiongemma-270m-it, Gemma 3
// 270M) and Gemma 4's (<|tool_call>, <|"|>), which share one grammar:
// call:NAME{key:<escape>text<escape>,n:3,flag:true,list:[…],obj:{…}}.
func gemmaNotations() []gemmaNotation {
	return []gemmaNotation{
		{"<start_function_call>", "<end_function_call>", "<escape>"},
		{"<|tool_call>", "<tool_call|>", `<|"|>`},
	}
}

// gemma recovers Gemma calls: the function-call tokens of FunctionGemma and
// Gemma 4, and Gemma 3's ```tool_code fences holding pythonic calls (Gemma 3
// has no tool tokens; Google's function-calling guide prompts it into code;
// its [f(a=1)] lists are the pythonic dialect's). Delimited strings stay
// strings; bare values are typed when they are JSON literals. Params keeps
// every top-level argument's text (a list or object as canonical JSON) for
// the schema to re-type; the pythonic fences are typed and carry none. A
// call or fence without its
// closing token is truncated.
func (r *recoverer) gemma() {
	for _, n := range gemmaNotations() {
		r.gemmaTokens(n)
	}
	r.gemmaFences()
}

func (r *recoverer) gemmaTokens(n gemmaNotation) {
	nextClose := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, n.open, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("gemma", start, len(r.text), "more than "+itoa(maxMarkers)+" "+n.open+" markers")
			return
		}
		body := start + len(n.open)
		if r.isClaimed(start) {
			i = body // reasoning, or another dialect's span
			continue
		}
		c := nextIndex(r.text, n.close, body, &nextClose)
		if o := indexFrom(r.text, n.open, body); c < 0 || (o >= 0 && o < c) {
			if o < 0 {
				r.truncated("gemma", start, "the Gemma call "+n.open)
				return
			}
			r.discard("gemma", start, o, "a Gemma call without "+n.close+" before the next "+n.open+" (truncated)")
			r.claim(start, o)
			i = o
			continue
		}
		end := c + len(n.close)
		r.claim(start, end)
		i = end
		g := &gemmaParser{s: r.text[:c], p: body, quote: n.quote, closed: true}
		for calls := 0; ; calls++ {
			if g.ws(); g.p >= c && calls > 0 {
				break
			}
			if calls == MaxCalls {
				r.discard("gemma", start, end, "more than "+itoa(MaxCalls)+" calls in one Gemma block")
				break
			}
			name, args, params, err := g.call()
			if err != "" {
				r.discard("gemma", start, end, "Gemma call: "+err)
				break
			}
			if r.add("gemma", start, end, name, args) {
				r.calls[len(r.calls)-1].Params, r.calls[len(r.calls)-1].grammarTyped = params, true
			}
		}
		if !r.spend(c-body+1, body) {
			return
		}
	}
}

// gemmaFences recovers ```tool_code fences whose body is pythonic calls,
// one a line or a [f(), g()] list. JSON bodies are the fence dialect's.
func (r *recoverer) gemmaFences() {
	const open = "```tool_code"
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, open, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			return // the fence dialect reports runaway fences
		}
		i = start + len(open)
		if r.isClaimed(start) {
			continue
		}
		nl := indexFrom(r.text, "\n", i)
		if nl < 0 || strings.TrimSpace(r.text[i:nl]) != "" {
			continue
		}
		p := skipSpace(r.text, nl+1)
		if p < len(r.text) && (r.text[p] == '{' || r.text[p] == '[' && !looksPythonic(r.text, p+1)) {
			continue
		}
		c := indexFrom(r.text, "```", nl+1)
		if c < 0 {
			r.truncated("gemma", start, "the ```tool_code fence")
			return
		}
		end := c + 3
		r.claim(start, end)
		i = end
		r.gemmaPythonic(start, end, nl+1, c)
	}
}

// gemmaPythonic parses the pythonic calls in text[from:to], all or none;
// print(f(…)) is read as f(…), and default_api.f(…) as f(…), as the code
// Gemma 3 is prompted to write.
func (r *recoverer) gemmaPythonic(start, end, from, to int) {
	ps := &pyParser{s: r.text[:to], p: skipSpace(r.text, from)}
	var calls []pyCall
	for {
		ps.ws()
		if ps.p >= to {
			break
		}
		if len(calls) == MaxCalls {
			r.discard("gemma", start, end, "more than "+itoa(MaxCalls)+" calls in one ```tool_code fence")
			return
		}
		var c []pyCall
		var err string
		switch {
		case ps.s[ps.p] == '[':
			c, err = ps.list()
		case strings.HasPrefix(ps.s[ps.p:], "print(") && looksPythonic(ps.s, ps.p+len("print(")):
			ps.p += len("print(")
			var one pyCall
			if one, err = ps.call(); err == "" && !ps.eat(')') {
				err = ps.unexpected("')' closing print(")
			}
			c = []pyCall{one}
		default:
			var one pyCall
			one, err = ps.call()
			c = []pyCall{one}
		}
		if err != "" {
			r.discard("gemma", start, end, "pythonic call in ```tool_code: "+err)
			return
		}
		calls = append(calls, c...)
	}
	if !r.spend(to-from+1, from) {
		return
	}
	if len(calls) == 0 {
		r.discard("gemma", start, end, "an empty ```tool_code fence")
		return
	}
	for _, c := range calls {
		r.add("gemma", start, end, gemmaToolName(c.name), c.args)
	}
}

// gemmaToolName drops the default_api. prefix of a ```tool_code call: the
// prompts of Google's Gemma function-calling guide declare the tools as
// methods of default_api, so Gemma 3 writes default_api.get_weather(…).
func gemmaToolName(name string) string {
	if n, ok := strings.CutPrefix(name, "default_api."); ok && n != "" {
		return n
	}
	return name
}

// gemmaParser reads Gemma's call grammar. Errors are messages; "" is success.
type gemmaParser struct {
	s     string
	p     int
	quote string
	depth int
	// closed says s ends where the call's closing token or the text
	// ends, so a last string without its closing quote may be read
	// (unclosedLast); inList counts the lists being read.
	closed bool
	inList int
}

func (g *gemmaParser) ws() { g.p = skipSpace(g.s, g.p) }

func (g *gemmaParser) unexpected(want string) string {
	if g.p >= len(g.s) {
		return "the call ends where " + want + " should be (truncated)"
	}
	return "expected " + want + " at " + quote(excerpt(g.s, g.p))
}

func (g *gemmaParser) call() (string, map[string]any, map[string]string, string) {
	g.ws()
	if !strings.HasPrefix(g.s[g.p:], "call:") {
		return "", nil, nil, g.unexpected("call:NAME")
	}
	g.p += len("call:")
	q := g.p
	for q < len(g.s) && isNameByte(g.s[q]) {
		q++
	}
	name := g.s[g.p:q]
	g.p = q
	if name == "" {
		return "", nil, nil, g.unexpected("a function name after call:")
	}
	if g.ws(); g.p >= len(g.s) || g.s[g.p] != '{' {
		return "", nil, nil, g.unexpected("'{' after call:" + name)
	}
	params := map[string]string{}
	args, err := g.object(params)
	return name, args, params, err
}

// object reads {key:value,…} at g.p; params, when not nil, receives the raw
// text of each scalar value.
func (g *gemmaParser) object(params map[string]string) (map[string]any, string) {
	if g.depth++; g.depth > parse.DefaultMaxDepth {
		return nil, "nested deeper than " + itoa(parse.DefaultMaxDepth)
	}
	g.p++ // '{'
	out := map[string]any{}
	for {
		if g.ws(); g.p < len(g.s) && g.s[g.p] == '}' {
			g.p++
			g.depth--
			return out, ""
		}
		key, err := g.key()
		if err != "" {
			return nil, err
		}
		if g.ws(); g.p >= len(g.s) || g.s[g.p] != ':' {
			return nil, g.unexpected("':' after the key " + quote(key))
		}
		g.p++
		v, raw, scalar, err := g.value()
		if err != "" {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, "duplicate key " + quote(key)
		}
		out[key] = v
		if params != nil && !scalar {
			// A list or object as canonical JSON: the raw text is Gemma's
			// grammar, which the schema re-typing cannot read.
			c, cerr := canon.Value(v)
			if cerr != nil {
				return nil, "the value of " + quote(key) + " cannot be encoded: " + cerr.Error()
			}
			raw = string(c)
		}
		if params != nil {
			params[key] = raw
		}
		if g.ws(); g.p < len(g.s) && g.s[g.p] == ',' {
			g.p++
		} else if g.p >= len(g.s) || g.s[g.p] != '}' {
			return nil, g.unexpected("',' or '}'")
		}
	}
}

func (g *gemmaParser) key() (string, string) {
	g.ws()
	if strings.HasPrefix(g.s[g.p:], g.quote) {
		k, err := g.delimited()
		return k, err
	}
	q := g.p
	for q < len(g.s) && (isNameByte(g.s[q]) || g.s[q] == '"' || g.s[q] == ' ') {
		q++
	}
	k := strings.Trim(strings.TrimSpace(g.s[g.p:q]), `"`)
	if k == "" {
		return "", g.unexpected("a key")
	}
	g.p = q
	return k, ""
}

// delimited reads a string between two quote tokens.
func (g *gemmaParser) delimited() (string, string) {
	from := g.p + len(g.quote)
	e := indexFrom(g.s, g.quote, from)
	if e < 0 {
		if v, ok := g.unclosedLast(from); ok {
			return v, ""
		}
		g.p = len(g.s)
		return "", "a " + g.quote + " string is not closed (truncated)"
	}
	g.p = e + len(g.quote)
	s := g.s[from:e]
	if !utf8.ValidString(s) {
		return "", "invalid UTF-8 in a string"
	}
	return s, ""
}

// unclosedLast reads a string opened at from whose closing quote token the
// model left out, as Ollama reads Gemma 4: only the last value of a call
// that is closed, so the text from from to the end of the call is the
// string and then exactly the '}' of every object still open
// (call:bash{command:<|"|>ls}), with no other '}' and no ",KEY:" in the
// string. Anything else is not read: a call cut off inside a string, or a
// string that may swallow another argument, stays refused.
func (g *gemmaParser) unclosedLast(from int) (string, bool) {
	if !g.closed || g.depth < 1 || g.inList > 0 {
		return "", false
	}
	rest := strings.TrimRight(g.s[from:], " \t\r\n")
	closers := strings.Repeat("}", g.depth)
	v, ok := strings.CutSuffix(rest, closers)
	if !ok || strings.Contains(v, "}") || !utf8.ValidString(v) || keyAhead(v) {
		return "", false
	}
	g.p = from + len(v)
	return v, true
}

// keyAhead reports whether s holds ",NAME:", the start of another
// argument: an unclosed string there is ambiguous and is not read.
func keyAhead(s string) bool {
	for i := strings.IndexByte(s, ','); i >= 0; {
		q := skipSpace(s, i+1)
		p := q
		for p < len(s) && isNameByte(s[p]) {
			p++
		}
		if p > q && p < len(s) && s[p] == ':' {
			return true
		}
		n := strings.IndexByte(s[i+1:], ',')
		if n < 0 {
			return false
		}
		i += 1 + n
	}
	return false
}

// value reads one value; raw is the text of a scalar, scalar reports one.
func (g *gemmaParser) value() (v any, raw string, scalar bool, err string) {
	g.ws()
	if g.p >= len(g.s) {
		return nil, "", false, g.unexpected("a value")
	}
	switch c := g.s[g.p]; {
	case strings.HasPrefix(g.s[g.p:], g.quote):
		s, err := g.delimited()
		return s, s, true, err
	case c == '{':
		m, err := g.object(nil)
		return m, "", false, err
	case c == '[':
		if g.depth++; g.depth > parse.DefaultMaxDepth {
			return nil, "", false, "nested deeper than " + itoa(parse.DefaultMaxDepth)
		}
		g.p++
		g.inList++
		list := []any{}
		for {
			if g.ws(); g.p < len(g.s) && g.s[g.p] == ']' {
				g.p++
				g.depth--
				g.inList--
				return list, "", false, ""
			}
			e, _, _, err := g.value()
			if err != "" {
				return nil, "", false, err
			}
			list = append(list, e)
			if g.ws(); g.p < len(g.s) && g.s[g.p] == ',' {
				g.p++
			} else if g.p >= len(g.s) || g.s[g.p] != ']' {
				return nil, "", false, g.unexpected("',' or ']'")
			}
		}
	case c == '"':
		// A JSON string where the model forgot the delimiter token.
		e := g.p + 1
		for e < len(g.s) && g.s[e] != '"' {
			if g.s[e] == '\\' {
				e++
			}
			e++
		}
		if e >= len(g.s) {
			g.p = len(g.s)
			return nil, "", false, "a quoted string is not closed (truncated)"
		}
		v, _, perr := parse.Value([]byte(g.s[g.p:e+1]), parse.DefaultLimits())
		if perr != nil {
			return nil, "", false, "a quoted string: " + reasonOf(perr)
		}
		s := v.(string)
		g.p = e + 1
		return s, s, true, ""
	}
	q := g.p
	for q < len(g.s) && !strings.ContainsRune(",}]", rune(g.s[q])) && !strings.HasPrefix(g.s[q:], g.quote) {
		q++
	}
	if q >= len(g.s) {
		g.p = q
		return nil, "", false, g.unexpected("the end of a value")
	}
	raw = strings.TrimSpace(g.s[g.p:q])
	g.p = q
	if raw == "" {
		return nil, "", false, g.unexpected("a value")
	}
	return typedValue(raw), raw, true, ""
}
