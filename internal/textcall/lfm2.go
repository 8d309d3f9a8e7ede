package textcall

import "strings"

// LFM2 (Liquid AI) writes its calls between the same special tokens as
// MiniCPM, but as one list: <|tool_call_start|>[f(a=1), g(b="x")]<|tool_call_end|>
// (LiquidAI/LFM2 chat template; vLLM's lfm2 tool parser). Some LFM2 builds
// asked for JSON write a JSON list of {"name", "arguments"} there instead.
const (
	lfmOpen  = "<|tool_call_start|>"
	lfmClose = "<|tool_call_end|>"
)

// lfm2 recovers the <|tool_call_start|> blocks whose body is a list ('[')
// or a JSON object: a pythonic list is parsed whole (one call that does not
// parse discards the block), JSON as the other JSON markers. A block
// without <|tool_call_end|> was cut: a Discard. Blocks of pythonic lines
// without brackets are MiniCPM's, left to minicpm.
func (r *recoverer) lfm2() {
	closeCache := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, lfmOpen, i)
		if start < 0 {
			return
		}
		body := start + len(lfmOpen)
		i = body
		if seen == maxMarkers {
			return // minicpm reports the excess of markers
		}
		p := skipSpace(r.text, body)
		if r.isClaimed(start) || p < len(r.text) && r.text[p] != '[' && r.text[p] != '{' {
			continue
		}
		bodyEnd, end, ok := r.closedBlock("lfm2", lfmOpen, lfmClose, start, &closeCache)
		i = end
		if !ok {
			continue
		}
		r.claim(start, end)
		if q := skipSpace(r.text, p+1); r.text[p] == '{' || q < bodyEnd && r.text[q] == '{' {
			r.jsonRegion("lfm2", start, end, p, bodyEnd)
			continue
		}
		r.lfmList(start, end, p, bodyEnd)
	}
}

// lfmList decodes the pythonic list at text[p:to], which must hold nothing
// else.
func (r *recoverer) lfmList(start, end, p, to int) {
	ps := &pyParser{s: r.text[:to], p: p}
	calls, err := ps.list()
	if !r.spend(ps.p-p+1, p) {
		return
	}
	if err == "" && strings.TrimSpace(r.text[ps.p:to]) != "" {
		err = "unexpected text " + quote(excerpt(r.text[:to], skipSpace(r.text, ps.p))) + " after the list of calls"
	}
	if err != "" {
		r.discard("lfm2", start, end, "pythonic call list: "+err)
		return
	}
	for _, c := range calls {
		r.add("lfm2", start, end, c.name, c.args)
	}
}
