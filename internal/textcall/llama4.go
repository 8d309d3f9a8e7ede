package textcall

import "strings"

// llama4 recovers what Llama 4 writes between <|python_start|> and
// <|python_end|> (or <|eom|>, <|eot|>, the next <|python_start|> or the
// end): a pythonic list of calls [f(a=1), g(b="x")], one pythonic call,
// or JSON calls. The bare pythonic list without the tokens, which the
// Llama 4 template asks for, is the pythonic dialect's.
func (r *recoverer) llama4() {
	const marker = "<|python_start|>"
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, marker, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("llama4", start, len(r.text), "more than "+itoa(maxMarkers)+" <|python_start|> markers")
			return
		}
		body := start + len(marker)
		bodyEnd, end := len(r.text), len(r.text)
		// The next marker first: it bounds the other searches, so that
		// many markers without an end token cost one pass, not one each.
		for _, stop := range []string{marker, "<|python_end|>", "<|eom|>", "<|eot|>"} {
			if k := indexFrom(r.text[:bodyEnd], stop, body); k >= 0 {
				bodyEnd, end = k, k
				if stop != marker {
					end = k + len(stop)
				}
			}
		}
		i = max(body, bodyEnd)
		if r.isClaimed(start) {
			continue
		}
		r.claim(start, end)
		p := skipSpace(r.text, body)
		if p < bodyEnd && (r.text[p] == '{' || r.text[p] == '[' && strings.HasPrefix(r.text[skipSpace(r.text, p+1):], "{")) {
			r.jsonRegion("llama4", start, end, body, bodyEnd)
			continue
		}
		if p >= bodyEnd {
			r.discard("llama4", start, end, "nothing between <|python_start|> and its end")
			continue
		}
		r.pythonicAt("llama4", start, end, p, bodyEnd, true)
	}
}
