package textcall

import "strings"

// bare recovers, after every marker dialect has claimed its spans, the
// calls some engines read without any marker:
//   - Gemma 4's call:NAME{…} when the server stripped its <|tool_call>
//     tokens (Ollama reads it so), values <|"|>-quoted or bare;
//   - OLMo 3's pythonic calls, NAME(k=v), written without <function_calls>,
//     only when the caller said which tools exist (Options.Known), every
//     call names one of them, and the calls are all the text outside the
//     reasoning: a call named in a sentence is never read.
func (r *recoverer) bare() {
	r.gemmaBare()
	r.olmoBare()
}

// gemmaBare reads call:NAME{…} standing alone outside every claimed span:
// at the start of a line (or right after the previous call), with nothing
// after it on its line but another call. A call that parses is recorded;
// one that runs to the end of the text, or that uses Gemma's <|"|> token,
// is a Discard; anything else is prose.
func (r *recoverer) gemmaBare() {
	const prefix = "call:"
	quote := `<|"|>`
	after := -1 // the end of the last call read
	for i, seen := 0, 0; ; seen++ {
		k := indexFrom(r.text, prefix, i)
		if k < 0 || seen == maxMarkers {
			return
		}
		i = k + len(prefix)
		if !(lineStart(r.text, k) || k == after) || !gemmaHeadAt(r.text, i) {
			continue
		}
		if r.isClaimed(k) || r.covered(k) {
			continue
		}
		g := &gemmaParser{s: r.text, p: k, quote: quote, closed: true}
		name, args, params, err := g.call()
		if !r.spend(g.p-k+1, k) {
			return
		}
		if err != "" {
			end := min(max(g.p, i), len(r.text))
			if g.p >= len(r.text) || strings.Contains(r.text[k:end], quote) {
				r.discard("gemma", k, len(r.text), "Gemma call written without its <|tool_call> token: "+err)
				r.claim(k, len(r.text))
				return
			}
			continue
		}
		if rest := strings.TrimLeft(r.text[g.p:], " \t\r"); rest != "" && rest[0] != '\n' && !strings.HasPrefix(rest, prefix) {
			continue // the grammar named in a sentence
		}
		r.claim(k, g.p)
		if r.add("gemma", k, g.p, name, args) {
			r.calls[len(r.calls)-1].Params, r.calls[len(r.calls)-1].grammarTyped = params, true
		}
		i, after = g.p, g.p
	}
}

// gemmaHeadAt reports whether text[p:] is NAME{.
func gemmaHeadAt(text string, p int) bool {
	q := p
	for q < len(text) && isNameByte(text[q]) {
		q++
	}
	return q > p && q < len(text) && text[q] == '{'
}

// olmoBare reads the text outside reasoning as OLMo 3's calls without
// their <function_calls> block: NAME(k=v) calls separated by white space
// or ';', or one [f(), g()] list, each naming a known tool. All or none;
// nothing is recorded when the text is anything else.
func (r *recoverer) olmoBare() {
	if r.known == nil || len(r.calls) > 0 || len(r.discards) > 0 {
		return
	}
	merged := mergeSpans(r.claimed)
	from, to := 0, len(r.text)
	for _, s := range merged {
		if s.start >= to {
			break
		}
		// Reasoning before or after the answer is left out; a claimed
		// span in the middle means the text is something else.
		switch {
		case strings.TrimSpace(r.text[from:s.start]) == "":
			from = max(from, s.end)
		case strings.TrimSpace(r.text[s.end:to]) == "":
			to = min(to, s.start)
		default:
			return
		}
	}
	from, to = skipSpace(r.text, from), len(strings.TrimRight(r.text[:to], " \t\r\n"))
	if from >= to || !looksPythonic(r.text, from) && !(r.text[from] == '[' && looksPythonic(r.text, from+1)) {
		return
	}
	ps := &pyParser{s: r.text[:to], p: from}
	var calls []pyCall
	if r.text[from] == '[' {
		list, err := ps.list()
		if err != "" {
			return
		}
		calls = list
	}
	for len(calls) <= MaxCalls {
		for ps.p < to && strings.IndexByte(" \t\r\n;", r.text[ps.p]) >= 0 {
			ps.p++
		}
		if ps.p >= to {
			break
		}
		c, err := ps.call()
		if err != "" {
			return
		}
		calls = append(calls, c)
	}
	if !r.spend(to-from+1, from) || len(calls) == 0 || len(calls) > MaxCalls {
		return
	}
	for _, c := range calls {
		if !r.known(c.name) {
			return
		}
	}
	r.claim(from, to)
	for _, c := range calls {
		r.add("olmo3", from, to, c.name, c.args)
	}
}
