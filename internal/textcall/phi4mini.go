package textcall

import "strings"

// phi4mini recovers Microsoft Phi-4-mini calls: the marker functools, then
// a JSON list of {"name", "arguments"} objects (or one object), with no
// closing marker (the template says none is required). Python's functools
// module in prose is not followed by '[' or '{' and is left alone.
func (r *recoverer) phi4mini() {
	const marker = "functools"
	if strings.IndexByte(r.text, '[') < 0 && strings.IndexByte(r.text, '{') < 0 {
		return // no list or object to follow the marker; skips a search that stops at every 'f'
	}
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, marker, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("phi4-mini", start, len(r.text), "more than "+itoa(maxMarkers)+" functools markers")
			return
		}
		i = start + len(marker)
		p := skipSpace(r.text, i)
		if p >= len(r.text) || (r.text[p] != '[' && r.text[p] != '{') || r.isClaimed(start) {
			continue
		}
		v, next, err := r.decodeIn(p, len(r.text))
		if err != nil {
			r.discard("phi4-mini", start, next, reasonOf(err))
			r.claim(start, next)
			i = max(i, next)
			continue
		}
		r.claim(start, next)
		r.addValue("phi4-mini", start, next, v)
		i = next
	}
}
