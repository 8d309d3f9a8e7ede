package textcall

import (
	"strings"

	"github.com/toolgate/toolgate/internal/parse"
)

// DeepSeek V3.2 DSML markup (deepseek-ai/DeepSeek-V3.2 encoding_dsv32.py);
// the bars are U+FF5C, as in the older DeepSeek tokens.
const (
	dsmlToken       = "｜DSML｜"
	dsmlCalls       = "<｜DSML｜function_calls>"
	dsmlCallsEnd    = "</｜DSML｜function_calls>"
	dsmlInvoke      = "<｜DSML｜invoke"
	dsmlInvokeEnd   = "</｜DSML｜invoke>"
	dsmlParam       = "<｜DSML｜parameter"
	dsmlParamEnd    = "</｜DSML｜parameter>"
	dsmlFormat      = "deepseek-dsml"
	dsmlMaxAttrByte = 512
)

// dsml recovers DeepSeek V3.2 calls:
// <｜DSML｜function_calls>
// <｜DSML｜invoke name="NAME">
// <｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter>
// </｜DSML｜invoke>
// </｜DSML｜function_calls>.
// string="true" values are strings; string="false" values are JSON, typed in
// Arguments (text that is not JSON is a Discard); a parameter without the
// attribute is guessed like Qwen3-Coder's. Params keeps every parameter's raw
// text, for the schema to re-type. An invoke may carry one JSON object
// instead of parameters. Missing closing tags are truncation.
func (r *recoverer) dsml() {
	for i, seen := 0, 0; ; seen++ {
		k := indexFrom(r.text, dsmlToken, i)
		if k < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard(dsmlFormat, k, len(r.text), "more than "+itoa(maxMarkers)+" DSML tags")
			return
		}
		start := k - 1
		if start >= 0 && r.isClaimed(start) {
			i = k + len(dsmlToken) // reasoning, or another dialect's span
			continue
		}
		switch {
		case start >= 0 && strings.HasPrefix(r.text[start:], dsmlCalls):
			body := start + len(dsmlCalls)
			e := indexFrom(r.text, dsmlCallsEnd, body)
			if e < 0 {
				r.truncated(dsmlFormat, start, "the DSML <｜DSML｜function_calls> block")
				return
			}
			end := e + len(dsmlCallsEnd)
			r.claim(start, end)
			r.dsmlInvokes(start, end, body, e)
			i = end
		case start >= 0 && strings.HasPrefix(r.text[start:], dsmlInvoke):
			// An invoke written without its function_calls block.
			e := indexFrom(r.text, dsmlInvokeEnd, start)
			if e < 0 {
				r.truncated(dsmlFormat, start, "the DSML invoke")
				return
			}
			end := e + len(dsmlInvokeEnd)
			r.claim(start, end)
			r.dsmlInvokes(start, end, start, end)
			i = end
		default:
			i = k + len(dsmlToken)
		}
	}
}

// dsmlInvokes decodes every invoke in text[from:to].
func (r *recoverer) dsmlInvokes(start, end, from, to int) {
	n, nextEnd := 0, -2
	for p := from; ; n++ {
		v := indexFrom(r.text[:to], dsmlInvoke, p)
		if v < 0 {
			break
		}
		if n == maxMarkers {
			r.discard(dsmlFormat, v, to, "more than "+itoa(maxMarkers)+" DSML invokes in one block")
			return
		}
		e := nextIndex(r.text[:to], dsmlInvokeEnd, v, &nextEnd)
		if nv := indexFrom(r.text[:to], dsmlInvoke, v+len(dsmlInvoke)); e < 0 || (nv >= 0 && nv < e) {
			stop := to
			if nv >= 0 {
				stop = nv
			}
			r.discard(dsmlFormat, v, stop, "a DSML invoke without </｜DSML｜invoke> (truncated)")
			p = stop
			continue
		}
		r.dsmlInvoke(v, e+len(dsmlInvokeEnd), e)
		p = e + len(dsmlInvokeEnd)
	}
	if n == 0 {
		r.discard(dsmlFormat, start, end, "a DSML function_calls block without an invoke")
	}
}

// dsmlInvoke decodes the invoke at text[start:end] whose body ends at bodyEnd.
func (r *recoverer) dsmlInvoke(start, end, bodyEnd int) {
	attrs, body, ok := dsmlTag(r.text[:bodyEnd], start+len(dsmlInvoke))
	name := attrs["name"]
	if !ok || strings.TrimSpace(name) == "" {
		r.discard(dsmlFormat, start, end, `a DSML invoke without name="…"`)
		return
	}
	if p := skipSpace(r.text, body); p < bodyEnd && r.text[p] == '{' {
		r.namedArgs(dsmlFormat, start, end, name, p, bodyEnd)
		return
	}
	params := map[string]string{}
	args := map[string]any{}
	for p := body; ; {
		p = skipSpace(r.text[:bodyEnd], p)
		if p >= bodyEnd {
			break
		}
		if !strings.HasPrefix(r.text[p:], dsmlParam) {
			r.discard(dsmlFormat, start, end, "unexpected text "+quote(excerpt(r.text[:bodyEnd], p))+" in the DSML invoke of "+name)
			return
		}
		attrs, v, ok := dsmlTag(r.text[:bodyEnd], p+len(dsmlParam))
		key := attrs["name"]
		ve := indexFrom(r.text[:bodyEnd], dsmlParamEnd, v)
		if !ok || ve < 0 {
			r.discard(dsmlFormat, start, end, "a DSML parameter of "+name+" is not closed")
			return
		}
		if _, dup := args[key]; dup || key == "" {
			r.discard(dsmlFormat, start, end, "empty or duplicate parameter name "+quote(key)+" in the DSML invoke of "+name)
			return
		}
		raw := r.text[v:ve]
		switch attrs["string"] {
		case "true":
			args[key], params[key] = raw, raw
		case "false":
			val, n, err := parse.Value([]byte(strings.TrimSpace(raw)), parse.DefaultLimits())
			if err != nil || n != len(strings.TrimSpace(raw)) {
				r.discard(dsmlFormat, start, end, "parameter "+quote(key)+` of `+name+` is marked string="false" but is not JSON: `+quote(excerpt(raw, 0)))
				return
			}
			args[key], params[key] = val, raw
		default:
			args[key], params[key] = typedValue(raw), raw
		}
		p = ve + len(dsmlParamEnd)
	}
	if r.add(dsmlFormat, start, end, name, args) && len(params) > 0 {
		r.calls[len(r.calls)-1].Params = params
	}
}

// dsmlTag reads the attributes of a tag from text[p:] up to its '>':
// name="…" string="…", each value up to its closing quote. It returns the
// attributes, the index after '>' and whether the tag was well formed.
func dsmlTag(text string, p int) (map[string]string, int, bool) {
	attrs := map[string]string{}
	for n := 0; n < 8; n++ {
		p = skipSpace(text, p)
		if p >= len(text) {
			return attrs, p, false
		}
		if text[p] == '>' {
			return attrs, p + 1, true
		}
		eq := strings.IndexByte(text[p:min(len(text), p+dsmlMaxAttrByte)], '=')
		if eq <= 0 || p+eq+1 >= len(text) || text[p+eq+1] != '"' {
			return attrs, p, false
		}
		key := text[p : p+eq]
		v := p + eq + 2
		q := strings.IndexByte(text[v:min(len(text), v+dsmlMaxAttrByte)], '"')
		if q < 0 {
			return attrs, p, false
		}
		attrs[key] = text[v : v+q]
		p = v + q + 1
	}
	return attrs, p, false
}
