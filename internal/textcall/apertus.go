package textcall

const (
	apertusPrefix = "<|tools_prefix|>"
	apertusSuffix = "<|tools_suffix|>"
)

// apertus recovers Swiss AI Apertus calls (swiss-ai/Apertus chat template):
// <|tools_prefix|>[{"NAME": {args}}, …]<|tools_suffix|>, a JSON list of
// {name: arguments} objects (unpack reads that shape). A list without
// <|tools_suffix|> is truncated.
func (r *recoverer) apertus() {
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, apertusPrefix, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("apertus", start, len(r.text), "more than "+itoa(maxMarkers)+" <|tools_prefix|> markers")
			return
		}
		body := start + len(apertusPrefix)
		if r.isClaimed(start) {
			i = body // reasoning, or another dialect's span
			continue
		}
		e := indexFrom(r.text, apertusSuffix, body)
		if n := indexFrom(r.text, apertusPrefix, body); e < 0 || (n >= 0 && n < e) {
			if n < 0 {
				r.truncated("apertus", start, "the <|tools_prefix|> list")
				return
			}
			r.discard("apertus", start, n, "a <|tools_prefix|> list without <|tools_suffix|> before the next one (truncated)")
			r.claim(start, n)
			i = n
			continue
		}
		end := e + len(apertusSuffix)
		r.claim(start, end)
		r.jsonRegion("apertus", start, end, body, e)
		i = end
	}
}
