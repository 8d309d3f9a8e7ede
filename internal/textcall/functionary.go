package textcall

import "strings"

// functionary recovers MeetKai functionary v3.2 calls: >>>NAME, a newline,
// then the JSON arguments, up to the next >>> or the end. >>>all carries
// the answer text, not a call. A >>> not followed by a name, a newline and
// '{' (a Python prompt in prose) is not a marker.
func (r *recoverer) functionary() {
	const marker = ">>>"
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, marker, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("functionary", start, len(r.text), "more than "+itoa(maxMarkers)+" >>> markers")
			return
		}
		q := start + len(marker)
		for q < len(r.text) && isNameByte(r.text[q]) {
			q++
		}
		i = q
		name := r.text[start+len(marker) : q]
		if name == "" || name == "all" || !strings.HasPrefix(r.text[q:], "\n") {
			continue
		}
		p := skipSpace(r.text, q)
		if p >= len(r.text) || r.text[p] != '{' || r.isClaimed(start) {
			continue
		}
		end := len(r.text)
		if n := indexFrom(r.text, marker, p); n >= 0 {
			end = n
		}
		r.claim(start, end)
		r.namedArgs("functionary", start, end, name, p, end)
		i = end
	}
}
