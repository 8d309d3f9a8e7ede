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
		r.argsBeforeToken("functionary", start, end, name, p, end)
		i = end
	}
}

// argsBeforeToken records the call of name whose arguments are the JSON
// object at text[p:], within to. After the object only white space or a
// special token (<|eot_id|>, <|im_end|>, ...) may follow before to: the
// server that returned the raw text may have kept the end-of-turn token.
func (r *recoverer) argsBeforeToken(format string, start, end int, name string, p, to int) {
	if name == "" || strings.IndexFunc(name, func(c rune) bool { return c > 0x7f || !isNameByte(byte(c)) }) >= 0 {
		r.discard(format, start, end, "no valid tool name")
		return
	}
	v, next, err := r.decodeIn(p, to)
	if err != nil {
		r.discard(format, start, end, reasonOf(err))
		return
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		r.discard(format, start, end, "the arguments of "+name+" are not a JSON object")
		return
	}
	if q := skipSpace(r.text, next); q < to && !strings.HasPrefix(r.text[q:to], "<|") {
		r.discard(format, start, end, "unexpected text after the arguments of "+name)
		return
	}
	r.add(format, start, end, name, m)
}
