package textcall

// glimmerPrefix is the namespace of Muse Glimmer's tool-call tags.
const glimmerPrefix = "atem:"

// glimmer recovers Muse Glimmer calls (its chat template; Ollama's and
// SGLang's glimmer parsers): an <atem:function_calls> block of
// <atem:invoke name="NAME"> elements, each holding
// <atem:parameter name="KEY">value</atem:parameter>, closed by
// </atem:function_calls>. Values are written as is (lists and objects as
// JSON) and kept unstripped, as the template says. A block, invoke or
// parameter without its closing tag was cut: a Discard.
func (r *recoverer) glimmer() {
	const open, close = "<" + glimmerPrefix + "function_calls>", "</" + glimmerPrefix + "function_calls>"
	closeCache := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, open, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("glimmer", start, len(r.text), "more than "+itoa(maxMarkers)+" "+open+" markers")
			return
		}
		i = start + len(open)
		if r.isClaimed(start) {
			continue
		}
		bodyEnd, end, ok := r.closedBlock("glimmer", open, close, start, &closeCache)
		i = end
		if !ok {
			continue
		}
		r.claim(start, end)
		r.invokeXML("glimmer", glimmerPrefix, start, end, start+len(open), bodyEnd)
	}
}
