package textcall

import "strings"

// Qwen-Agent's function-calling markers (Qwen2 / Qwen2.5 without a native
// tool parser).
const (
	qaFunction = "✿FUNCTION✿"
	qaArgs     = "✿ARGS✿"
	qaResult   = "✿RESULT✿"
	qaReturn   = "✿RETURN✿"
)

// qwenAgent recovers Qwen-Agent calls: ✿FUNCTION✿: NAME, a newline,
// ✿ARGS✿: then the JSON arguments, up to ✿RESULT✿, ✿RETURN✿, the next
// ✿FUNCTION✿ or the end. The colon may be ASCII or fullwidth.
func (r *recoverer) qwenAgent() {
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, qaFunction, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("qwen-agent", start, len(r.text), "more than "+itoa(maxMarkers)+" ✿FUNCTION✿ markers")
			return
		}
		body := start + len(qaFunction)
		// The next marker bounds the other searches, so that many markers
		// without a ✿RESULT✿ cost one pass, not one pass each.
		end := len(r.text)
		for _, stop := range []string{qaFunction, qaResult, qaReturn} {
			if k := indexFrom(r.text[:end], stop, body); k >= 0 {
				end = k
			}
		}
		i = end
		if r.isClaimed(start) {
			continue
		}
		r.claim(start, end)
		a := indexFrom(r.text[:end], qaArgs, body)
		if a < 0 {
			r.discard("qwen-agent", start, end, "no ✿ARGS✿ after ✿FUNCTION✿ (truncated)")
			continue
		}
		name := trimColon(r.text[body:a])
		p := skipSpace(r.text, a+len(qaArgs)+colonLen(r.text[a+len(qaArgs):end]))
		if p >= end || r.text[p] != '{' {
			r.discard("qwen-agent", start, end, "the arguments of "+quote(name)+" are not a JSON object")
			continue
		}
		r.argsBeforeToken("qwen-agent", start, end, name, p, end)
	}
}

// trimColon trims space and one leading ':' or '：'.
func trimColon(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, ":"), "：")
	return strings.TrimSpace(s)
}

// colonLen is the length of the space and ':' or '：' that start s.
func colonLen(s string) int {
	p := skipSpace(s, 0)
	switch {
	case strings.HasPrefix(s[p:], ":"):
		return p + 1
	case strings.HasPrefix(s[p:], "："):
		return p + len("：")
	}
	return p
}
