package textcall

import (
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/parse"
)

// markerFence reports whether a fence info string declares a tool call; a
// fence with one is a marker, whose failures are Discards.
func markerFence(info string) bool {
	switch info {
	case "tool_call", "tool_calls", "tool_code", "function_call":
		return true
	}
	return false
}

// fences recovers calls in markdown code fences: ```json, ```tool_call and
// bare ```. A fence without its closing ``` runs to the end of the text.
func (r *recoverer) fences() {
	for i, seen := 0, 0; seen < maxMarkers; seen++ {
		start := indexFrom(r.text, "```", i)
		if start < 0 {
			return
		}
		nl := indexFrom(r.text, "\n", start)
		if nl < 0 {
			return
		}
		info := strings.ToLower(strings.TrimSpace(r.text[start+3 : nl]))
		body := nl + 1
		bodyEnd, end := len(r.text), len(r.text)
		if c := indexFrom(r.text, "```", body); c >= 0 {
			bodyEnd, end = c, c+3
		}
		i = end
		if r.isClaimed(start) || (info != "" && info != "json" && !markerFence(info)) {
			continue
		}
		p := skipSpace(r.text, body)
		if p >= bodyEnd || (r.text[p] != '{' && r.text[p] != '[') {
			continue
		}
		marker := markerFence(info)
		v, next, err := r.decodeIn(p, bodyEnd)
		if err != nil {
			if marker {
				r.claim(start, end)
				r.discard("fence", start, end, reasonOf(err))
			}
			continue
		}
		if !marker && !holdsCalls(v) {
			continue // ordinary JSON shown to the user; prose may still find a call in it
		}
		r.claim(start, end)
		r.addValue("fence", start, end, v)
		if q := skipSpace(r.text, next); q < bodyEnd {
			r.jsonRegion("fence", start, end, q, bodyEnd)
		}
	}
}

// holdsCalls reports whether v is a call-shaped object or a non-empty list
// of them.
func holdsCalls(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return callShaped(v)
	case []any:
		for _, e := range v {
			m, ok := e.(map[string]any)
			if !ok || !callShaped(m) {
				return false
			}
		}
		return len(v) > 0
	}
	return false
}

// prose recovers call-shaped JSON objects floating in text, including the
// elements of a JSON list of calls and ';'-separated Llama 3 calls. Each
// '{' followed by '"' starts a candidate decoded by the strict decoder, which
// respects strings and escapes and finds where balanced JSON ends. A
// non-call object is searched for nested calls. A candidate that fails to
// decode is a Discard only when its first key names a call part (name,
// arguments, ...), so ordinary braces in prose stay silent.
func (r *recoverer) prose() {
	merged := mergeSpans(r.claimed)
	for i := 0; ; {
		k := strings.IndexByte(r.text[i:], '{')
		if k < 0 {
			return
		}
		p := i + k
		i = p + 1
		if q := skipSpace(r.text, p+1); q >= len(r.text) || r.text[q] != '"' {
			continue
		}
		if e, in := inSpans(merged, p); in {
			i = e
			continue
		}
		v, n, err := parse.Value(r.data[p:], parse.DefaultLimits())
		used := n
		if err != nil {
			used = err.Offset
		}
		if !r.spend(used+1, p) {
			return
		}
		if err != nil {
			if key := firstKey(r.text, p); slices.Contains(nameKeys(), key) || slices.Contains(argKeys(), key) {
				r.discard("json", p, min(len(r.text), p+err.Offset+1), "call-shaped JSON that does not parse: "+reasonOf(err))
				if err.Code == parse.CodeTruncated {
					return
				}
			}
			continue
		}
		if m := v.(map[string]any); callShaped(m) {
			r.addValue("json", p, p+n, m)
			i = p + n
		}
	}
}

// firstKey returns the first key of the object at text[p] when it is a
// plain string, or "".
func firstKey(text string, p int) string {
	q := skipSpace(text, p+1)
	if q >= len(text) || text[q] != '"' {
		return ""
	}
	e := strings.IndexAny(text[q+1:min(len(text), q+32)], `"\`)
	if e < 0 || text[q+1+e] != '"' {
		return ""
	}
	return text[q+1 : q+1+e]
}

// mergeSpans sorts and merges spans so that inSpans can binary-search them.
func mergeSpans(spans []span) []span {
	s := slices.Clone(spans)
	slices.SortFunc(s, func(a, b span) int { return a.start - b.start })
	var out []span
	for _, x := range s {
		if n := len(out); n > 0 && x.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, x.end)
			continue
		}
		out = append(out, x)
	}
	return out
}

// inSpans reports whether pos lies in one of the merged spans, and its end.
func inSpans(merged []span, pos int) (int, bool) {
	k, _ := slices.BinarySearchFunc(merged, pos, func(s span, p int) int { return s.start - p })
	// merged[k-1] is the last span starting at or before pos, unless
	// merged[k] starts exactly at pos.
	if k < len(merged) && merged[k].start == pos {
		return merged[k].end, merged[k].end > pos
	}
	if k > 0 && pos < merged[k-1].end {
		return merged[k-1].end, true
	}
	return 0, false
}
