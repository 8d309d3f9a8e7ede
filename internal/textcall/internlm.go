package textcall

import "strings"

// InternLM2.5 / InternLM3 action tokens.
const (
	ilmActionStart = "<|action_start|>"
	ilmActionEnd   = "<|action_end|>"
	ilmPlugin      = "<|plugin|>"
	ilmInterpreter = "<|interpreter|>"
)

// internlm recovers InternLM calls: <|action_start|><|plugin|>, one JSON
// object {"name", "parameters"}, then <|action_end|>; an action without
// <|action_end|> was cut off and is a Discard. A code-interpreter action (<|interpreter|>) holds
// code, not a call, and is a Discard.
func (r *recoverer) internlm() {
	closeCache := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, ilmActionStart, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("internlm", start, len(r.text), "more than "+itoa(maxMarkers)+" <|action_start|> markers")
			return
		}
		if r.isClaimed(start) {
			i = start + len(ilmActionStart)
			continue
		}
		bodyEnd, end, ok := r.closedBlock("internlm", ilmActionStart, ilmActionEnd, start, &closeCache)
		i = end
		if !ok {
			continue
		}
		r.claim(start, end)
		p := skipSpace(r.text, start+len(ilmActionStart))
		switch {
		case strings.HasPrefix(r.text[p:bodyEnd], ilmPlugin):
			r.jsonRegion("internlm", start, end, p+len(ilmPlugin), bodyEnd)
		case strings.HasPrefix(r.text[p:bodyEnd], ilmInterpreter):
			r.discard("internlm", start, end, "a code-interpreter action holds code, not a tool call")
		default:
			r.discard("internlm", start, end, "<|action_start|> is not followed by <|plugin|>")
		}
	}
}
