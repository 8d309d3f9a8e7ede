package textcall

import "strings"

// invokeXML decodes every <PREFIXinvoke name="NAME"> block in
// text[from:to], each holding <PREFIXparameter name="KEY">value
// </PREFIXparameter> elements and closed by </PREFIXinvoke> (MiniMax M2
// with no prefix, StepFun Step-3 with "steptml:"). start and end are the
// span reported. Values are text: Params keeps them, trimmed as the
// models' own parsers trim them, and Arguments guesses their types as
// qwen-xml does. An invoke or parameter without its closing tag was cut:
// it is a Discard, never completed.
func (r *recoverer) invokeXML(format, prefix string, start, end, from, to int) {
	invOpen, invClose := "<"+prefix+"invoke name=", "</"+prefix+"invoke>"
	parOpen, parClose := "<"+prefix+"parameter name=", "</"+prefix+"parameter>"
	found := false
	for q, seen := from, 0; ; seen++ {
		k := indexFrom(r.text[:to], invOpen, q)
		if k < 0 {
			break
		}
		if seen == maxMarkers {
			r.discard(format, k, end, "more than "+itoa(maxMarkers)+" invokes in one block; the rest were not read")
			return
		}
		found = true
		k += len(invOpen)
		gt := strings.IndexByte(r.text[k:to], '>')
		if gt < 0 {
			r.discard(format, start, end, "the "+invOpen+" tag is not closed (truncated)")
			return
		}
		name := unquoteName(r.text[k : k+gt])
		body := k + gt + 1
		invEnd := indexFrom(r.text[:to], invClose, body)
		if invEnd < 0 {
			r.discard(format, start, end, "no "+invClose+" after the call of "+quote(name)+" (truncated)")
			return
		}
		q = invEnd + len(invClose)
		if name == "" {
			r.discard(format, start, end, "an invoke without a tool name")
			continue
		}
		params, reason := r.invokeParams(parOpen, parClose, body, invEnd, prefix != glimmerPrefix)
		if reason != "" {
			r.discard(format, start, end, reason+" in the call of "+quote(name))
			continue
		}
		args := make(map[string]any, len(params))
		for k, v := range params {
			args[k] = typedValue(v)
		}
		if r.add(format, start, end, name, args) {
			r.calls[len(r.calls)-1].Params = params
		}
	}
	if !found {
		r.discard(format, start, end, "no "+invOpen+" in the tool-call block")
	}
}

// invokeParams reads the parameter elements of one invoke body.
// With trim, a value's surrounding white space is dropped.
func (r *recoverer) invokeParams(parOpen, parClose string, from, to int, trim bool) (map[string]string, string) {
	params := map[string]string{}
	for q := from; ; {
		k := indexFrom(r.text[:to], parOpen, q)
		if k < 0 {
			return params, ""
		}
		k += len(parOpen)
		gt := strings.IndexByte(r.text[k:to], '>')
		if gt < 0 {
			return nil, "a parameter tag is not closed"
		}
		key := unquoteName(r.text[k : k+gt])
		vStart := k + gt + 1
		vEnd := indexFrom(r.text[:to], parClose, vStart)
		if vEnd < 0 {
			return nil, "parameter " + quote(key) + " has no " + parClose
		}
		if _, dup := params[key]; dup || key == "" {
			return nil, "empty or duplicate parameter name " + quote(key)
		}
		params[key] = r.text[vStart:vEnd]
		if trim {
			params[key] = strings.TrimSpace(params[key])
		}
		q = vEnd + len(parClose)
	}
}

// unquoteName trims a tag attribute value and the quotes around it.
func unquoteName(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	return strings.TrimSpace(s)
}
