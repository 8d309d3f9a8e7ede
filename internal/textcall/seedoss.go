package textcall

const (
	seedOpen  = "<seed:tool_call>"
	seedClose = "</seed:tool_call>"
)

// seedOSS recovers ByteDance Seed-OSS calls (Seed-OSS-36B-Instruct chat
// template): <seed:tool_call><function=NAME><parameter=k>v</parameter>
// </function></seed:tool_call>, one or more <function=…> blocks a section.
// The blocks are Qwen3-Coder's markup and are decoded by qwenXML (raw values
// kept in Params), then labelled seed-oss; a block whose body is one JSON
// object (the form Seed-OSS's system prompt shows) is read as JSON. A
// section without </seed:tool_call> is truncated.
func (r *recoverer) seedOSS() {
	nextClose := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, seedOpen, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("seed-oss", start, len(r.text), "more than "+itoa(maxMarkers)+" <seed:tool_call> markers")
			return
		}
		body := start + len(seedOpen)
		if r.isClaimed(start) {
			i = body // reasoning, or another dialect's span
			continue
		}
		c := nextIndex(r.text, seedClose, body, &nextClose)
		if n := indexFrom(r.text, seedOpen, body); c < 0 || (n >= 0 && n < c) {
			if n < 0 {
				r.truncated("seed-oss", start, "the <seed:tool_call> section")
				return
			}
			r.discard("seed-oss", start, n, "a <seed:tool_call> section without </seed:tool_call> before the next one (truncated)")
			r.claim(start, n)
			i = n
			continue
		}
		end := c + len(seedClose)
		r.claim(start, end)
		i = end
		calls, discards := len(r.calls), len(r.discards)
		r.seedFunctions(start, end, body, c)
		r.relabel("seed-oss", calls, discards)
	}
}

// seedFunctions decodes each <function=…>…</function> in text[from:to].
func (r *recoverer) seedFunctions(start, end, from, to int) {
	const open, closeFn = "<function=", "</function>"
	n, nextClose := 0, -2
	for p := from; ; n++ {
		f := indexFrom(r.text[:to], open, p)
		if f < 0 {
			break
		}
		if n == maxMarkers {
			r.discard("seed-oss", f, to, "more than "+itoa(maxMarkers)+" calls in one <seed:tool_call> section")
			return
		}
		fe := to
		if c := nextIndex(r.text[:to], closeFn, f, &nextClose); c >= 0 {
			fe = c + len(closeFn)
		}
		if nf := indexFrom(r.text[:fe], open, f+len(open)); nf >= 0 {
			fe = nf // the block before it lacks </function>; qwenXML says so
		}
		p = fe
		// qwenXML reads the JSON-object body Seed-OSS's own system prompt
		// shows, <function=NAME>\n{"k": "v"}</function>, as the arguments.
		r.qwenXML(f, fe, f, fe)
	}
	if n == 0 {
		r.discard("seed-oss", start, end, "a <seed:tool_call> section without a <function=NAME> block")
	}
}
