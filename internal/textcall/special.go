package textcall

import "strings"

// DeepSeek V3 special tokens, written with U+FF5C (fullwidth vertical bar)
// and U+2581 (lower one eighth block). They reach us as ordinary text when a
// server returns raw output, so no tokenizer is needed to find them. Every
// one of the calls' tokens starts with dsToken, so one search finds the next.
const (
	dsToken      = "<｜tool▁call"
	dsCallsBegin = "<｜tool▁calls▁begin｜>"
	dsCallBegin  = "<｜tool▁call▁begin｜>"
	dsCallEnd    = "<｜tool▁call▁end｜>"
	dsSep        = "<｜tool▁sep｜>"
	dsCallsEnd   = "<｜tool▁calls▁end｜>"
)

// dsTokens are DeepSeek V3's call tokens in one spelling.
type dsTokens struct {
	token, callsBegin, callBegin, callEnd, sep, callsEnd string
}

// dsSpelling returns the tokens with fullwidth bars, or with ASCII bars as
// Ollama's DeepSeek template renders them (<|tool▁calls▁begin|>; the
// U+2581 blocks stay).
func dsSpelling(ascii bool) dsTokens {
	if ascii {
		return dsTokens{"<|tool▁call", "<|tool▁calls▁begin|>", "<|tool▁call▁begin|>", "<|tool▁call▁end|>", "<|tool▁sep|>", "<|tool▁calls▁end|>"}
	}
	return dsTokens{dsToken, dsCallsBegin, dsCallBegin, dsCallEnd, dsSep, dsCallsEnd}
}

// deepseek recovers DeepSeek V3 calls, both
// <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>
// and the V3.1 form <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>,
// inside a <｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜> section or alone, in
// either spelling of the bars (a section is closed in the spelling it was
// opened in). A section without <｜tool▁calls▁end｜> or a call without
// <｜tool▁call▁end｜> was cut (closing.go): a Discard, however complete its
// JSON looks.
func (r *recoverer) deepseek() {
	r.deepseekTokens(dsSpelling(false))
	r.deepseekTokens(dsSpelling(true))
}

func (r *recoverer) deepseekTokens(t dsTokens) {
	secEnd, bareEnd, nextSec := -2, -2, -2
	callAt := func(start, to int, endCache *int) int { return r.deepseekCallAt(t, start, to, endCache) }
	for i, seen := 0, 0; ; {
		k := indexFrom(r.text, t.token, i)
		if k < 0 {
			return
		}
		rest := r.text[k:]
		isSec := strings.HasPrefix(rest, t.callsBegin)
		if !isSec && !strings.HasPrefix(rest, t.callBegin) || r.isClaimed(k) {
			// A stray end token, reasoning, or another dialect's span.
			i = k + len(t.token)
			continue
		}
		if seen++; seen > maxMarkers {
			r.discard("deepseek", k, len(r.text), "more than "+itoa(maxMarkers)+" DeepSeek call markers")
			return
		}
		if !isSec {
			// A call written without its section tokens, bounded by the
			// next section.
			to := len(r.text)
			if n := nextIndex(r.text, t.callsBegin, k, &nextSec); n >= 0 {
				to = n
			}
			if i = callAt(k, to, &bareEnd); i < 0 {
				return
			}
			continue
		}
		body := k + len(t.callsBegin)
		e := nextIndex(r.text, t.callsEnd, body, &secEnd)
		if n := indexFrom(r.text, t.callsBegin, body); e < 0 || (n >= 0 && n < e) {
			if n < 0 {
				r.truncated("deepseek", k, "the "+t.callsBegin+" section")
				return
			}
			r.discard("deepseek", k, n, "a "+t.callsBegin+" section without "+t.callsEnd+" before the next one (truncated)")
			r.claim(k, n)
			i = n
			continue
		}
		end := e + len(t.callsEnd)
		r.claim(k, end)
		r.sectionCalls("deepseek", t.callBegin, k, end, body, e, callAt,
			"calls in one DeepSeek section", "a "+t.callsBegin+" section without a "+t.callBegin)
		i = end
	}
}

// deepseekCallAt decodes the call whose <｜tool▁call▁begin｜> is at start,
// bounded by to, and returns where scanning goes on, or -1 when the rest of
// the text was consumed as truncated. endCache keeps the search for
// <｜tool▁call▁end｜> (over the whole text, so that one cache serves every
// bound) linear over many unclosed calls.
func (r *recoverer) deepseekCallAt(t dsTokens, start, to int, endCache *int) int {
	body := start + len(t.callBegin)
	e := nextIndex(r.text, t.callEnd, body, endCache)
	if e+len(t.callEnd) > to {
		e = -1
	}
	if n := indexFrom(r.text[:to], t.callBegin, body); e < 0 || (n >= 0 && n < e) {
		stop := to
		if n >= 0 {
			stop = n
		}
		if stop == len(r.text) {
			r.truncated("deepseek", start, "the DeepSeek call")
			return -1
		}
		r.discard("deepseek", start, stop, "a DeepSeek call without "+t.callEnd+" (truncated)")
		r.claim(start, stop)
		return stop
	}
	end := e + len(t.callEnd)
	r.claim(start, end)
	r.deepseekCall(t, start, end, body, e)
	return end
}

func (r *recoverer) deepseekCall(t dsTokens, start, end, body, bodyEnd int) {
	sep := indexFrom(r.text[:bodyEnd], t.sep, body)
	if sep < 0 {
		r.discard("deepseek", start, end, "no "+t.sep+" in the call")
		return
	}
	left := strings.TrimSpace(r.text[body:sep])
	p := sep + len(t.sep)
	if nl := strings.IndexByte(r.text[p:bodyEnd], '\n'); nl >= 0 && strings.HasPrefix(strings.TrimSpace(r.text[p+nl:bodyEnd]), "```") {
		// V3: type on the left, name then a fenced JSON block on the right.
		name := strings.TrimSpace(r.text[p : p+nl])
		f := p + nl + strings.Index(r.text[p+nl:bodyEnd], "```")
		content := indexFrom(r.text[:bodyEnd], "\n", f)
		if content < 0 {
			r.discard("deepseek", start, end, "fenced arguments of "+name+" end before the JSON starts")
			return
		}
		close := indexFrom(r.text[:bodyEnd], "```", content)
		if close < 0 {
			r.discard("deepseek", start, end, "fenced arguments of "+name+" have no closing fence (truncated)")
			return
		}
		r.namedArgs("deepseek", start, end, name, content, close)
		return
	}
	r.namedArgs("deepseek", start, end, left, p, bodyEnd)
}

// namedArgs records a call whose name is known and whose arguments are the
// one JSON object in text[from:to].
func (r *recoverer) namedArgs(format string, start, end int, name string, from, to int) {
	r.namedArgsIn(format, start, end, name, from, to, false)
}

// namedArgsIn is namedArgs; with python, arguments that are not JSON may be
// one Python dict (pyLiteral).
func (r *recoverer) namedArgsIn(format string, start, end int, name string, from, to int, python bool) {
	if name == "" || strings.IndexFunc(name, func(c rune) bool { return c > 0x7f || !isNameByte(byte(c)) }) >= 0 {
		r.discard(format, start, end, "no valid tool name")
		return
	}
	p := skipSpace(r.text, from)
	if p >= to || r.text[p] != '{' {
		r.discard(format, start, end, "the arguments of "+name+" are not a JSON object")
		return
	}
	v, next, ok := r.valueIn(format, start, end, p, to, python)
	if !ok {
		return
	}
	if q := skipSpace(r.text, next); q < to {
		r.discard(format, start, end, "unexpected text after the arguments of "+name)
		return
	}
	r.add(format, start, end, name, v.(map[string]any))
}

// harmony recovers gpt-oss harmony calls: a header with the recipient
// to=functions.NAME, then <|message|>, the JSON arguments, and <|call|>.
// A message ending without <|call|> is accepted when its JSON is complete.
func (r *recoverer) harmony() {
	const recipient = "to=functions."
	for i, seen := 0, 0; ; seen++ {
		at := indexFrom(r.text, recipient, i)
		if at < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard("harmony", at, len(r.text), "more than "+itoa(maxMarkers)+" harmony recipients")
			return
		}
		q := at + len(recipient)
		for q < len(r.text) && isNameByte(r.text[q]) {
			q++
		}
		name := r.text[at+len(recipient) : q]
		i = q
		if r.isClaimed(at) {
			continue // a recipient inside reasoning (the analysis channel) or another notation
		}
		start := strings.LastIndex(r.text[:at], "<|start|>")
		if s := strings.LastIndex(r.text[:at], "<|end|>"); start < 0 || s > start {
			start = strings.LastIndex(r.text[:at], "<|channel|>")
		}
		if start < 0 {
			start = at
		}
		msg := indexFrom(r.text, "<|message|>", q)
		if msg < 0 {
			r.discard("harmony", start, len(r.text), "no <|message|> after the recipient functions."+name)
			r.claim(start, len(r.text))
			return
		}
		body := msg + len("<|message|>")
		bodyEnd, end := len(r.text), len(r.text)
		for _, stop := range []string{"<|call|>", "<|end|>", "<|return|>", "<|start|>"} {
			if k := indexFrom(r.text[:bodyEnd], stop, body); k >= 0 {
				bodyEnd, end = k, k
				if stop != "<|start|>" {
					end = k + len(stop)
				}
			}
		}
		i = end
		if r.isClaimed(start) {
			continue
		}
		r.claim(start, end)
		r.namedArgs("harmony", start, end, name, body, bodyEnd)
	}
}
