package textcall

import (
	"strings"

	"github.com/toolgate/toolgate/internal/parse"
)

// qwenXMLBare recovers Qwen3-Coder <function=…> blocks that are not inside a
// <tool_call> block (those are handled by hermes).
func (r *recoverer) qwenXMLBare() {
	const open = "<function="
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, open, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("qwen-xml", start, len(r.text), "more than "+itoa(maxMarkers)+" <function= markers")
			return
		}
		i = start + len(open)
		if r.isClaimed(start) {
			continue
		}
		end := len(r.text)
		if c := indexFrom(r.text, "</function>", i); c >= 0 {
			end = c + len("</function>")
		}
		r.claim(start, end)
		r.qwenXML(start, end, start, end)
		i = end
	}
}

// qwenXML decodes one <function=NAME><parameter=P>value</parameter>…
// </function> block in text[from:to]; start and end are the span reported.
// A missing </function> means the text was cut: the call is discarded.
// A </parameter> may be left out before the next <parameter= or
// </function>, as Qwen3-Coder models do.
func (r *recoverer) qwenXML(start, end, from, to int) {
	const open, closeFn = "<function=", "</function>"
	p := from + len(open)
	gt := strings.IndexByte(r.text[p:to], '>')
	if gt < 0 {
		r.discard("qwen-xml", start, end, "the <function= tag is not closed (truncated)")
		return
	}
	name := strings.TrimSpace(r.text[p : p+gt])
	body := p + gt + 1
	fnEnd := indexFrom(r.text[:to], closeFn, body)
	if fnEnd < 0 {
		r.discard("qwen-xml", start, end, "no </function> after the call of "+name+" (truncated)")
		return
	}
	if name == "" {
		r.discard("qwen-xml", start, end, "<function=> without a tool name")
		return
	}
	if indexFrom(r.text[:fnEnd], "<parameter=", body) < 0 {
		r.qwenXMLNoParams(start, end, name, body, fnEnd)
		return
	}
	params := map[string]string{}
	args := map[string]any{}
	nextClose := -2
	for q := body; ; {
		k := indexFrom(r.text[:fnEnd], "<parameter=", q)
		if k < 0 {
			break
		}
		k += len("<parameter=")
		gt := strings.IndexByte(r.text[k:fnEnd], '>')
		if gt < 0 {
			r.discard("qwen-xml", start, end, "a <parameter= tag of "+name+" is not closed")
			return
		}
		key := strings.TrimSpace(r.text[k : k+gt])
		vStart := k + gt + 1
		vEnd := fnEnd
		if c := nextIndex(r.text[:fnEnd], "</parameter>", vStart, &nextClose); c >= 0 {
			vEnd = c
		}
		if n := indexFrom(r.text[:vEnd], "<parameter=", vStart); n >= 0 {
			vEnd = n
		}
		if _, dup := params[key]; dup || key == "" {
			r.discard("qwen-xml", start, end, "empty or duplicate parameter name "+quote(key)+" in the call of "+name)
			return
		}
		raw := trimOneNewline(r.text[vStart:vEnd])
		params[key] = raw
		args[key] = typedValue(raw)
		q = vEnd
	}
	if r.add("qwen-xml", start, end, name, args) {
		r.calls[len(r.calls)-1].Params = params
	}
}

// qwenXMLNoParams decodes the body text[body:fnEnd] of a <function=NAME>
// block without a <parameter=…>: empty, it is a call without arguments; one
// JSON object, it is the arguments (the form Seed-OSS's system prompt shows,
// and models trained on Hermes JSON write inside <function=…>); any other
// text is a Discard, never a call whose arguments were dropped.
func (r *recoverer) qwenXMLNoParams(start, end int, name string, body, fnEnd int) {
	p := skipSpace(r.text, body)
	switch {
	case p >= fnEnd:
		r.add("qwen-xml", start, end, name, map[string]any{})
	case r.text[p] == '{':
		r.namedArgs("qwen-xml", start, end, name, p, fnEnd)
	default:
		r.discard("qwen-xml", start, end, "the call of "+name+" holds text that is neither <parameter=…> tags nor a JSON object: "+quote(excerpt(r.text[:fnEnd], p)))
	}
}

// typedValue takes a parameter's text as JSON when the whole of it is a JSON
// number, boolean, null, object or array, and as a string otherwise.
func typedValue(raw string) any {
	s := strings.TrimSpace(raw)
	if s == "" {
		return raw
	}
	switch c := s[0]; {
	case c == '{' || c == '[' || c == '-' || c >= '0' && c <= '9' || s == "true" || s == "false" || s == "null":
		v, n, err := parse.Value([]byte(s), parse.DefaultLimits())
		if err == nil && n == len(s) {
			return v
		}
	}
	return raw
}

func trimOneNewline(s string) string {
	s = strings.TrimPrefix(s, "\n")
	return strings.TrimSuffix(s, "\n")
}

func quote(s string) string { return `"` + s + `"` }
