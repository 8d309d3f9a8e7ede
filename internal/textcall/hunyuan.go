package textcall

import "strings"

const (
	hyBlock    = "<tool_calls>"
	hyBlockEnd = "</tool_calls>"
	hySep      = "<tool_sep>"
)

// hunyuan recovers Tencent Hy3 (Hunyuan v3, model_type hy_v3) calls:
// <tool_calls>\n<tool_call>NAME<tool_sep>\n<arg_key>k</arg_key>\n
// <arg_value>v</arg_value>\n</tool_call>\n</tool_calls>, a call with no
// arguments being NAME<tool_sep> alone (tencent/Hy3-preview chat template;
// vLLM's hy_v3 tool parser). The pairs are GLM's, read as glm reads them;
// a JSON object after <tool_sep> is read too. A <tool_call> of this shape
// outside a block is read alone. A block or call without its closing tag
// was cut: a Discard. Hunyuan-A13B's <tool_calls>[JSON] is jamba's.
func (r *recoverer) hunyuan() {
	closeCache := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, hyBlock, i)
		if start < 0 {
			break
		}
		body := start + len(hyBlock)
		i = body
		if seen == maxMarkers {
			break // jamba reports the excess of <tool_calls> markers
		}
		if r.isClaimed(start) || !hyCallAhead(r.text, skipSpace(r.text, body)) {
			continue
		}
		bodyEnd, end, ok := r.closedBlock("hunyuan", hyBlock, hyBlockEnd, start, &closeCache)
		i = end
		if !ok {
			continue
		}
		r.claim(start, end)
		r.hyCalls(start, end, body, bodyEnd)
	}
	// Calls written without the block.
	for i, seen := 0, 0; seen < maxMarkers; seen++ {
		k := indexFrom(r.text, glmOpen, i)
		if k < 0 {
			return
		}
		i = k + len(glmOpen)
		if r.isClaimed(k) || !hyCallAhead(r.text, k) {
			continue
		}
		c := indexFrom(r.text, glmClose, i)
		if n := indexFrom(r.text, glmOpen, i); c < 0 || n >= 0 && n < c {
			stop := len(r.text)
			if c >= 0 || n >= 0 {
				stop = n
			}
			r.discard("hunyuan", k, stop, "a Hunyuan call without </tool_call> (truncated)")
			r.claim(k, stop)
			i = stop
			continue
		}
		end := c + len(glmClose)
		r.claim(k, end)
		r.hyCalls(k, end, k, end)
		i = end
	}
}

// hyCallAhead reports whether text[p:] is <tool_call>NAME<tool_sep>.
func hyCallAhead(text string, p int) bool {
	if !strings.HasPrefix(text[p:], glmOpen) {
		return false
	}
	return followsName(text, skipSpace(text, p+len(glmOpen)), hySep)
}

// hyCalls decodes the <tool_call> elements in text[from:to], the body of
// a block spanning start..end: every one must be whole, or it is a Discard.
func (r *recoverer) hyCalls(start, end, from, to int) {
	calls, discards := len(r.calls), len(r.discards)
	defer r.relabel("hunyuan", calls, discards)
	for p, n := from, 0; ; n++ {
		p = glmSkip(r.text[:to], p)
		if p >= to {
			if n == 0 {
				r.discard("hunyuan", start, end, "an empty <tool_calls> block")
			}
			return
		}
		if n == MaxCalls || !hyCallAhead(r.text[:to], p) {
			r.discard("hunyuan", start, end, "unexpected text "+quote(excerpt(r.text[:to], p))+" in the <tool_calls> block (expected <tool_call>NAME<tool_sep>)")
			return
		}
		c := indexFrom(r.text[:to], glmClose, p)
		if c < 0 {
			r.discard("hunyuan", start, end, "a <tool_call> in the block has no </tool_call> (truncated)")
			return
		}
		q := skipSpace(r.text, p+len(glmOpen))
		sep := indexFrom(r.text, hySep, q)
		name := strings.TrimSpace(r.text[q:sep])
		args := sep + len(hySep)
		if a := skipSpace(r.text[:c], args); a < c && r.text[a] == '{' {
			r.namedArgs("hunyuan", start, end, name, a, c)
		} else {
			r.glmArgs(start, end, name, args, c)
		}
		p = c + len(glmClose)
	}
}
