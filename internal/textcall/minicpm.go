package textcall

import "strings"

// minicpm recovers MiniCPM3 / MiniCPM4 calls: between <|tool_call_start|>
// and <|tool_call_end|>, pythonic calls one a line (f(a=1)), optionally in
// a ```python fence. Every call must parse, or the block is a Discard; a
// block without <|tool_call_end|> was cut off.
func (r *recoverer) minicpm() {
	const open, close = "<|tool_call_start|>", "<|tool_call_end|>"
	closeCache := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, open, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("minicpm", start, len(r.text), "more than "+itoa(maxMarkers)+" "+open+" markers")
			return
		}
		if r.isClaimed(start) {
			i = start + len(open)
			continue
		}
		bodyEnd, end, ok := r.closedBlock("minicpm", open, close, start, &closeCache)
		i = end
		if !ok {
			continue
		}
		r.claim(start, end)
		r.pythonicLines(start, end, start+len(open), bodyEnd)
	}
}

// pythonicLines decodes the pythonic calls in text[from:to], separated by
// white space or ';', optionally fenced, and adds them all or none.
func (r *recoverer) pythonicLines(start, end, from, to int) {
	p := skipSpace(r.text, from)
	if strings.HasPrefix(r.text[p:to], "```") {
		p += 3
		if strings.HasPrefix(r.text[p:to], "python") {
			p += len("python")
		}
		if k := strings.LastIndex(r.text[p:to], "```"); k >= 0 {
			to = p + k
		}
	}
	ps := &pyParser{s: r.text[:to], p: p}
	var calls []pyCall
	for {
		for ps.p < to && strings.IndexByte(" \t\r\n;", r.text[ps.p]) >= 0 {
			ps.p++
		}
		if ps.p >= to {
			break
		}
		c, err := ps.call()
		if !r.spend(ps.p-p+1, p) {
			return
		}
		if err != "" {
			r.discard("minicpm", start, end, "pythonic call: "+err)
			return
		}
		calls = append(calls, c)
	}
	if len(calls) == 0 {
		r.discard("minicpm", start, end, "empty tool-call block")
	}
	for _, c := range calls {
		r.add("minicpm", start, end, c.name, c.args)
	}
}
