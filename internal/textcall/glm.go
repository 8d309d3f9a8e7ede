package textcall

import "strings"

const (
	glmOpen     = "<tool_call>"
	glmClose    = "</tool_call>"
	glmKey      = "<arg_key>"
	glmKeyEnd   = "</arg_key>"
	glmValue    = "<arg_value>"
	glmValueEnd = "</arg_value>"
)

// glm recovers GLM-4.5/4.6/4.7 calls (zai-org chat templates):
// <tool_call>NAME\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n</tool_call>,
// or GLM-4.7's compact form without the newlines. A value is the text the
// template wrote: a string as is, anything else as JSON; Params keeps each
// raw. The older GLM-4 form NAME\n{json} is read too. A <tool_call> whose
// body is JSON or Qwen3-Coder XML is left to hermes; one without
// </tool_call> is truncated.
func (r *recoverer) glm() {
	nextClose := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, glmOpen, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			return // hermes reports the excess of <tool_call> markers
		}
		body := start + len(glmOpen)
		i = body
		name, after, ok := glmHead(r.text, body)
		if !ok || r.isClaimed(start) {
			continue
		}
		c := nextIndex(r.text, glmClose, body, &nextClose)
		if n := indexFrom(r.text, glmOpen, body); c < 0 || (n >= 0 && n < c) {
			if n < 0 {
				r.truncated("glm", start, "the GLM call of "+name+" (no </tool_call>)")
				return
			}
			r.discard("glm", start, n, "the GLM call of "+name+" has no </tool_call> before the next <tool_call> (truncated)")
			r.claim(start, n)
			i = n
			continue
		}
		end := c + len(glmClose)
		r.claim(start, end)
		i = end
		if p := skipSpace(r.text, after); p < c && r.text[p] == '{' {
			r.namedArgs("glm", start, end, name, p, c)
			continue
		}
		r.glmArgs(start, end, name, after, c)
	}
}

// glmHead reads the tool name that opens a GLM body at text[p:] and reports
// whether what follows is GLM's: an <arg_key>, the </tool_call>, the end of
// the text (a cut), or a JSON object on the next line.
func glmHead(text string, p int) (name string, after int, ok bool) {
	p = skipSpace(text, p)
	q := p
	for q < len(text) && isNameByte(text[q]) {
		q++
	}
	if q == p {
		return "", 0, false
	}
	s := skipSpace(text, q)
	rest := text[s:]
	switch {
	case strings.HasPrefix(rest, glmKey), strings.HasPrefix(rest, glmClose):
	case s > q && strings.HasPrefix(rest, "{") && strings.ContainsRune(text[q:s], '\n'):
	case s == len(text) && s > q, strings.HasPrefix(glmKey, rest), strings.HasPrefix(glmClose, rest) && rest != "":
		// Cut inside or just before a tag: still GLM's, and truncated.
	default:
		return "", 0, false
	}
	return text[p:q], q, true
}

// glmArgs decodes the <arg_key>/<arg_value> pairs in text[from:to].
func (r *recoverer) glmArgs(start, end int, name string, from, to int) {
	params := map[string]string{}
	args := map[string]any{}
	for p := from; ; {
		p = glmSkip(r.text[:to], p)
		if p >= to {
			break
		}
		if !strings.HasPrefix(r.text[p:], glmKey) {
			r.discard("glm", start, end, "unexpected text "+quote(excerpt(r.text[:to], p))+" in the GLM call of "+name+" (expected <arg_key>)")
			return
		}
		ke := indexFrom(r.text[:to], glmKeyEnd, p)
		if ke < 0 {
			r.discard("glm", start, end, "an <arg_key> of the GLM call of "+name+" is not closed")
			return
		}
		key := strings.TrimSpace(r.text[p+len(glmKey) : ke])
		v := glmSkip(r.text[:to], ke+len(glmKeyEnd))
		if !strings.HasPrefix(r.text[v:], glmValue) {
			r.discard("glm", start, end, "no <arg_value> after <arg_key>"+key+"</arg_key> in the GLM call of "+name)
			return
		}
		v += len(glmValue)
		ve := indexFrom(r.text[:to], glmValueEnd, v)
		if ve < 0 {
			r.discard("glm", start, end, "the <arg_value> of "+quote(key)+" in the GLM call of "+name+" is not closed")
			return
		}
		if _, dup := params[key]; dup || key == "" {
			r.discard("glm", start, end, "empty or duplicate argument name "+quote(key)+" in the GLM call of "+name)
			return
		}
		// The template writes no newline around a value; one there is the
		// model's layout between tags (vLLM strips it too).
		raw := trimOneNewline(r.text[v:ve])
		params[key] = raw
		args[key] = typedValue(raw)
		p = ve + len(glmValueEnd)
	}
	if r.add("glm", start, end, name, args) {
		r.calls[len(r.calls)-1].Params = params
	}
}

// glmSkip skips white space and the two-character "\n" some GLM servers
// leave escaped between tags.
func glmSkip(s string, p int) int {
	for {
		p = skipSpace(s, p)
		if !strings.HasPrefix(s[p:], `\n`) {
			return p
		}
		p += 2
	}
}
