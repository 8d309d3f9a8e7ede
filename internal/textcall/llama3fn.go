package textcall

// llama3Function recovers the Llama 3.1 custom-tool form, which
// functionary v3.1 also writes: <function=NAME>{JSON arguments}</function>.
// A <function=NAME> not followed by '{' is Qwen3-Coder XML, left to the
// qwen-xml dialect. Without </function> the call was cut: a Discard.
func (r *recoverer) llama3Function() {
	const open, close = "<function=", "</function>"
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, open, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("llama3-function", start, len(r.text), "more than "+itoa(maxMarkers)+" <function= markers")
			return
		}
		q := start + len(open)
		for q < len(r.text) && isNameByte(r.text[q]) {
			q++
		}
		i = q
		if q >= len(r.text) || r.text[q] != '>' || r.isClaimed(start) {
			continue
		}
		name := r.text[start+len(open) : q]
		p := skipSpace(r.text, q+1)
		if p >= len(r.text) || r.text[p] != '{' {
			continue
		}
		c := indexFrom(r.text, close, p)
		if c < 0 {
			r.claim(start, len(r.text))
			r.discard("llama3-function", start, len(r.text), "no </function> after the call of "+quote(name)+" (truncated)")
			return
		}
		end := c + len(close)
		r.claim(start, end)
		r.namedArgs("llama3-function", start, end, name, p, c)
		i = end
	}
}
