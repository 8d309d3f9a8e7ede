package textcall

import (
	"strings"

	"github.com/toolgate/toolgate/internal/parse"
)

// DeepSeek V3.2 DSML markup (deepseek-ai/DeepSeek-V3.2 encoding_dsv32.py);
// the bars are U+FF5C, as in the older DeepSeek tokens. DeepSeek's hosted
// API has been seen writing the same markup with ASCII bars in content
// (<|DSML|function_calls>), so both spellings are read; a block is closed
// in the spelling it was opened in.
const (
	dsmlWord        = "DSML"
	dsmlFormat      = "deepseek-dsml"
	dsmlMaxAttrByte = 512
)

// dsmlTokens are the tags of one spelling of DSML.
type dsmlTokens struct {
	calls, callsEnd, invoke, invokeEnd, param, paramEnd string
}

// dsmlSpelling returns the fullwidth-bar tags, or the ASCII-bar ones.
func dsmlSpelling(ascii bool) dsmlTokens {
	if ascii {
		return dsmlTokens{
			"<|DSML|function_calls>", "</|DSML|function_calls>",
			"<|DSML|invoke", "</|DSML|invoke>",
			"<|DSML|parameter", "</|DSML|parameter>",
		}
	}
	return dsmlTokens{
		"<｜DSML｜function_calls>", "</｜DSML｜function_calls>",
		"<｜DSML｜invoke", "</｜DSML｜invoke>",
		"<｜DSML｜parameter", "</｜DSML｜parameter>",
	}
}

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
// instead of parameters. Missing closing tags are truncation. One search for
// "DSML" finds the tags of both spellings.
func (r *recoverer) dsml() {
	for i, seen := 0, 0; ; {
		k := indexFrom(r.text, dsmlWord, i)
		if k < 0 {
			return
		}
		i = k + len(dsmlWord)
		if !(k >= 3 && r.text[k-3:k] == "｜") && !(k >= 1 && r.text[k-1] == '|') {
			continue // the word in prose
		}
		if seen++; seen > maxMarkers {
			r.discard(dsmlFormat, k, len(r.text), "more than "+itoa(maxMarkers)+" DSML tags")
			return
		}
		start, ascii := -1, false
		switch {
		case k >= 4 && r.text[k-4:k] == "<｜":
			start = k - 4
		case k >= 2 && r.text[k-2:k] == "<|":
			start, ascii = k-2, true
		}
		if start < 0 || r.isClaimed(start) {
			continue // a closing tag, reasoning, or another dialect's span
		}
		t := dsmlSpelling(ascii)
		switch {
		case strings.HasPrefix(r.text[start:], t.calls):
			body := start + len(t.calls)
			e := indexFrom(r.text, t.callsEnd, body)
			if e < 0 {
				r.truncated(dsmlFormat, start, "the DSML "+t.calls+" block")
				return
			}
			end := e + len(t.callsEnd)
			r.claim(start, end)
			r.dsmlInvokes(t, start, end, body, e)
			i = end
		case strings.HasPrefix(r.text[start:], t.invoke):
			// An invoke written without its function_calls block.
			e := indexFrom(r.text, t.invokeEnd, start)
			if e < 0 {
				r.truncated(dsmlFormat, start, "the DSML invoke")
				return
			}
			end := e + len(t.invokeEnd)
			r.claim(start, end)
			r.dsmlInvokes(t, start, end, start, end)
			i = end
		}
	}
}

// dsmlInvokes decodes every invoke in text[from:to].
func (r *recoverer) dsmlInvokes(t dsmlTokens, start, end, from, to int) {
	n, nextEnd := 0, -2
	for p := from; ; n++ {
		v := indexFrom(r.text[:to], t.invoke, p)
		if v < 0 {
			break
		}
		if n == maxMarkers {
			r.discard(dsmlFormat, v, to, "more than "+itoa(maxMarkers)+" DSML invokes in one block")
			return
		}
		e := nextIndex(r.text[:to], t.invokeEnd, v, &nextEnd)
		if nv := indexFrom(r.text[:to], t.invoke, v+len(t.invoke)); e < 0 || (nv >= 0 && nv < e) {
			stop := to
			if nv >= 0 {
				stop = nv
			}
			r.discard(dsmlFormat, v, stop, "a DSML invoke without "+t.invokeEnd+" (truncated)")
			p = stop
			continue
		}
		r.dsmlInvoke(t, v, e+len(t.invokeEnd), e)
		p = e + len(t.invokeEnd)
	}
	if n == 0 {
		r.discard(dsmlFormat, start, end, "a DSML function_calls block without an invoke")
	}
}

// dsmlInvoke decodes the invoke at text[start:end] whose body ends at bodyEnd.
func (r *recoverer) dsmlInvoke(t dsmlTokens, start, end, bodyEnd int) {
	attrs, body, ok := dsmlTag(r.text[:bodyEnd], start+len(t.invoke))
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
		if !strings.HasPrefix(r.text[p:], t.param) {
			r.discard(dsmlFormat, start, end, "unexpected text "+quote(excerpt(r.text[:bodyEnd], p))+" in the DSML invoke of "+name)
			return
		}
		attrs, v, ok := dsmlTag(r.text[:bodyEnd], p+len(t.param))
		key := attrs["name"]
		ve := indexFrom(r.text[:bodyEnd], t.paramEnd, v)
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
		p = ve + len(t.paramEnd)
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
