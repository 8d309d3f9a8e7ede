package textcall

import "strings"

const (
	olmoOpen  = "<function_calls>"
	olmoClose = "</function_calls>"
)

// olmo3 recovers AllenAI OLMo 3 calls (allenai/Olmo-3 chat templates):
// <function_calls>\nNAME(k=v, …)\nNAME2(…)\n</function_calls>, one pythonic
// call a line (a call may run over lines; a [f(), g()] list is read too).
// Values are Python or JSON literals. A block without </function_calls> is
// truncated; a line that is not a call is a Discard of the whole block.
func (r *recoverer) olmo3() {
	nextClose := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, olmoOpen, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("olmo3", start, len(r.text), "more than "+itoa(maxMarkers)+" <function_calls> markers")
			return
		}
		body := start + len(olmoOpen)
		if r.isClaimed(start) {
			i = body // reasoning, or another dialect's span
			continue
		}
		c := nextIndex(r.text, olmoClose, body, &nextClose)
		if n := indexFrom(r.text, olmoOpen, body); c < 0 || (n >= 0 && n < c) {
			if n < 0 {
				if !olmoCallAhead(r.text, body) {
					return // the tag named in prose, not a block
				}
				r.truncated("olmo3", start, "the <function_calls> block")
				return
			}
			r.discard("olmo3", start, n, "a <function_calls> block without </function_calls> before the next one (truncated)")
			r.claim(start, n)
			i = n
			continue
		}
		end := c + len(olmoClose)
		i = end
		if strings.HasPrefix(strings.TrimSpace(r.text[body:c]), "<") {
			// Anthropic-style <invoke> markup inside <function_calls> is
			// another notation; leave it to the scanners that read it.
			continue
		}
		r.claim(start, end)
		r.olmoCalls(start, end, body, c)
	}
}

// olmoCalls parses the calls in text[from:to], all or none.
func (r *recoverer) olmoCalls(start, end, from, to int) {
	ps := &pyParser{s: r.text[:to], p: skipSpace(r.text, from)}
	var calls []pyCall
	if ps.p < to && ps.s[ps.p] == '[' {
		list, err := ps.list()
		if err != "" {
			r.discard("olmo3", start, end, "pythonic call: "+err)
			return
		}
		calls = list
	}
	for {
		if len(calls) > MaxCalls {
			r.discard("olmo3", start, end, "more than "+itoa(MaxCalls)+" calls in one <function_calls> block")
			return
		}
		ps.ws()
		for ps.p < to && ps.s[ps.p] == ',' || ps.p < to && ps.s[ps.p] == ';' {
			ps.p++
			ps.ws()
		}
		if ps.p >= to {
			break
		}
		c, err := ps.call()
		if err != "" {
			r.discard("olmo3", start, end, "pythonic call: "+err)
			return
		}
		calls = append(calls, c)
	}
	if !r.spend(to-from+1, from) {
		return
	}
	if len(calls) == 0 {
		r.discard("olmo3", start, end, "an empty <function_calls> block")
		return
	}
	for _, c := range calls {
		r.add("olmo3", start, end, c.name, c.args)
	}
}

// olmoCallAhead reports whether text[p:] is empty or starts a call (a name
// on the way to its '(', or a list), as an unclosed block cut off does.
func olmoCallAhead(text string, p int) bool {
	p = skipSpace(text, p)
	q := p
	for q < len(text) && isNameByte(text[q]) {
		q++
	}
	return q == len(text) || text[p] == '[' || q > p && skipSpace(text, q) < len(text) && text[skipSpace(text, q)] == '('
}
