package textcall

import (
	"strings"

	"github.com/toolgate/toolgate/internal/parse"
)

// maxMarkers bounds how many occurrences of one marker are examined, which
// keeps the claimed-span bookkeeping small.
const maxMarkers = 4 * MaxCalls

// indexFrom returns the index of sub in text at or after from, or -1.
func indexFrom(text, sub string, from int) int {
	if from > len(text) {
		return -1
	}
	k := strings.Index(text[from:], sub)
	if k < 0 {
		return -1
	}
	return from + k
}

// nextIndex finds sub at or after from, reusing a cached earlier result so
// that repeated searches over text without sub stay linear overall.
func nextIndex(text, sub string, from int, cache *int) int {
	if *cache == -1 || *cache >= from {
		return *cache
	}
	*cache = indexFrom(text, sub, from)
	return *cache
}

// decodeIn decodes one JSON value from data[pos:end] and returns the error's
// end for claiming: end of region when truncated, the failing byte otherwise.
func (r *recoverer) decodeIn(pos, end int) (any, int, *parse.Error) {
	v, n, err := parse.Value(r.data[pos:end], parse.DefaultLimits())
	if err != nil {
		if err.Code == parse.CodeTruncated {
			return nil, end, err
		}
		return nil, min(end, pos+err.Offset+1), err
	}
	return v, pos + n, nil
}

// hermes recovers <tool_call>…</tool_call> blocks. A block without its
// closing tag runs to the next <tool_call> or to the end of the text, and
// is accepted when the JSON inside is complete.
func (r *recoverer) hermes() {
	const open, close = "<tool_call>", "</tool_call>"
	nextClose := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, open, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("hermes", start, len(r.text), "more than "+itoa(maxMarkers)+" <tool_call> markers")
			return
		}
		body := start + len(open)
		bodyEnd, end := len(r.text), len(r.text)
		c := nextIndex(r.text, close, body, &nextClose)
		n := indexFrom(r.text, open, body)
		switch {
		case c >= 0 && (n < 0 || c < n):
			bodyEnd, end = c, c+len(close)
		case n >= 0:
			bodyEnd, end = n, n
		}
		i = end
		if r.isClaimed(start) {
			continue
		}
		r.claim(start, end)
		p := skipSpace(r.text, body)
		if strings.HasPrefix(r.text[p:], "<function=") {
			r.qwenXML(start, end, p, bodyEnd)
			continue
		}
		// Hermes-2-Pro, whose prompt shows the call as a Python dict, may
		// write one: {'arguments': {'a': 1}, 'name': 'f'}.
		r.callsIn("hermes", start, end, body, bodyEnd, true)
	}
}

// jsonRegion decodes the JSON calls in data[from:to], separated by white
// space, ',' or ';'. Every failure is a Discard: the region is a marker.
func (r *recoverer) jsonRegion(format string, start, end, from, to int) {
	r.callsIn(format, start, end, from, to, false)
}

// valueIn decodes the JSON value at p, bounded by to; with python, a value
// that is not JSON may be one Python literal (pyLiteral). A failure is a
// Discard of start..end, and ok is false.
func (r *recoverer) valueIn(format string, start, end, p, to int, python bool) (v any, next int, ok bool) {
	v, next, err := r.decodeIn(p, to)
	if err == nil {
		return v, next, true
	}
	if !python {
		r.discard(format, start, end, reasonOf(err))
		return nil, 0, false
	}
	v, next, perr := pyLiteral(r.text, p, to)
	if perr != "" {
		r.discard(format, start, end, reasonOf(err)+"; nor a Python literal: "+perr)
		return nil, 0, false
	}
	return v, next, true
}

// callsIn is jsonRegion; with python, a value that is not JSON may be one
// Python literal (pyLiteral).
func (r *recoverer) callsIn(format string, start, end, from, to int, python bool) {
	p := from
	for found := false; ; found = true {
		for p < to && strings.IndexByte(" \t\r\n,;", r.text[p]) >= 0 {
			p++
		}
		if p >= to {
			if !found {
				r.discard(format, start, end, "empty tool-call block")
			}
			return
		}
		if c := r.text[p]; c != '{' && c != '[' {
			if !found {
				r.discard(format, start, end, "tool-call block does not hold a JSON object")
			}
			return
		}
		v, next, ok := r.valueIn(format, start, end, p, to, python)
		if !ok {
			return
		}
		r.addValue(format, start, end, v)
		p = next
	}
}

// mistral recovers [TOOL_CALLS] calls: the pre-v11 JSON list (or object) and
// the v11 name{json} form, optionally with [CALL_ID]id and [ARGS] between.
func (r *recoverer) mistral() {
	const marker = "[TOOL_CALLS]"
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, marker, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("mistral", start, len(r.text), "more than "+itoa(maxMarkers)+" [TOOL_CALLS] markers")
			return
		}
		i = start + len(marker)
		if r.isClaimed(start) {
			continue
		}
		end := r.mistralAt(start, skipSpace(r.text, i))
		r.claim(start, end)
		i = max(i, end)
	}
}

func (r *recoverer) mistralAt(start, p int) (end int) {
	if p >= len(r.text) {
		r.discard("mistral", start, p, "nothing after [TOOL_CALLS]")
		return p
	}
	if c := r.text[p]; c == '[' || c == '{' {
		v, next, err := r.decodeIn(p, len(r.text))
		if err != nil {
			r.discard("mistral", start, next, reasonOf(err))
			return next
		}
		r.addValue("mistral", start, next, v)
		return next
	}
	q := p
	for q < len(r.text) && isNameByte(r.text[q]) {
		q++
	}
	name := r.text[p:q]
	if name == "" {
		r.discard("mistral", start, q, "no tool name after [TOOL_CALLS]")
		return max(q, p+1)
	}
	if strings.HasPrefix(r.text[q:], "[CALL_ID]") {
		if a := indexFrom(r.text, "[ARGS]", q); a >= 0 {
			q = a
		}
	}
	q = skipSpace(r.text, q)
	if strings.HasPrefix(r.text[q:], "[ARGS]") {
		q = skipSpace(r.text, q+len("[ARGS]"))
	}
	if q >= len(r.text) || r.text[q] != '{' {
		r.discard("mistral", start, q, "no JSON arguments object after the tool name "+name)
		return q
	}
	v, next, err := r.decodeIn(q, len(r.text))
	if err != nil {
		r.discard("mistral", start, next, reasonOf(err))
		return next
	}
	r.add("mistral", start, next, name, v.(map[string]any))
	return next
}

// pythonTag recovers what follows Llama 3.x <|python_tag|> up to <|eom_id|>,
// <|eot_id|> or the end: JSON calls separated by ';', or pythonic calls.
func (r *recoverer) pythonTag() {
	const marker = "<|python_tag|>"
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, marker, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("llama3", start, len(r.text), "more than "+itoa(maxMarkers)+" <|python_tag|> markers")
			return
		}
		body := start + len(marker)
		bodyEnd := len(r.text)
		for _, stop := range []string{"<|eom_id|>", "<|eot_id|>", marker} {
			if k := indexFrom(r.text[:bodyEnd], stop, body); k >= 0 {
				bodyEnd = k
			}
		}
		end := bodyEnd
		if !strings.HasPrefix(r.text[end:], marker) {
			end = min(len(r.text), end+len("<|eom_id|>"))
		}
		i = max(body, bodyEnd)
		if r.isClaimed(start) {
			continue
		}
		r.claim(start, end)
		p := skipSpace(r.text, body)
		if p < bodyEnd && r.text[p] != '{' && r.text[p] != '[' {
			r.pythonicAt("llama3", start, end, p, bodyEnd, true)
			continue
		}
		if p < bodyEnd && r.text[p] == '[' && !strings.HasPrefix(r.text[skipSpace(r.text, p+1):], "{") {
			r.pythonicAt("llama3", start, end, p, bodyEnd, true)
			continue
		}
		r.jsonRegion("llama3", start, end, body, bodyEnd)
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
