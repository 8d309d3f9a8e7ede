package textcall

import "strings"

// gigachat recovers GigaChat 3 calls: the assistant turn "function call",
// the <|role_sep|> token, a newline, then one JSON object {"name",
// "arguments"}, ended by its own brackets. The search is for the token,
// which prose does not hold, and not for the words before it.
func (r *recoverer) gigachat() {
	const role, sep = "function call", "<|role_sep|>"
	for i, seen := 0, 0; ; seen++ {
		k := indexFrom(r.text, sep, i)
		if k < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("gigachat", k, len(r.text), "more than "+itoa(maxMarkers)+" <|role_sep|> tokens")
			return
		}
		i = k + len(sep)
		start := k - len(role)
		if !strings.HasSuffix(r.text[:k], role) || r.isClaimed(start) {
			continue
		}
		end := len(r.text)
		if n := indexFrom(r.text, sep, i); n >= 0 {
			end = n
		}
		r.claim(start, end)
		r.jsonRegion("gigachat", start, end, i, end)
		i = end
	}
}
