package textcall

import "strings"

// invoke recovers the Anthropic-style markup that models trained on it
// write: <function_calls>, then <invoke name="NAME"> blocks with
// <parameter name="KEY">value</parameter> elements, then
// </function_calls>. A <function_calls> block of pythonic lines is OLMo
// 3's, which claims it first; an unclosed block is discarded there.
func (r *recoverer) invoke() {
	const open, close = "<function_calls>", "</function_calls>"
	closeCache := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, open, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("invoke", start, len(r.text), "more than "+itoa(maxMarkers)+" "+open+" markers")
			return
		}
		i = start + len(open)
		if r.isClaimed(start) || !strings.HasPrefix(r.text[skipSpace(r.text, i):], "<invoke") {
			continue
		}
		bodyEnd, end, ok := r.closedBlock("invoke", open, close, start, &closeCache)
		i = end
		if !ok {
			continue
		}
		r.claim(start, end)
		r.invokeXML("invoke", "", start, end, start+len(open), bodyEnd)
	}
}
