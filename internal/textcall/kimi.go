package textcall

import "strings"

// Kimi K2 special tokens (moonshotai/Kimi-K2-Instruct chat template). Every
// one starts with kimiToken, so one search finds the next of any of them.
const (
	kimiToken      = "<|tool_call"
	kimiCallBegin  = "<|tool_call_begin|>"
	kimiArgBegin   = "<|tool_call_argument_begin|>"
	kimiCallEnd    = "<|tool_call_end|>"
	kimiSecBegin   = "<|tool_calls_section_begin|>"
	kimiSecEnd     = "<|tool_calls_section_end|>"
	kimiSecBegin1  = "<|tool_call_section_begin|>" // the singular spelling some K2 builds write
	kimiSecEnd1    = "<|tool_call_section_end|>"
	kimiFuncPrefix = "functions."
)

// kimi recovers Kimi K2 calls:
// <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
// <|tool_call_argument_begin|>{json}<|tool_call_end|>…<|tool_calls_section_end|>.
// The id's "functions." prefix and ":IDX" suffix are dropped from the name.
// A section or a call without its end token is truncated: a Discard.
func (r *recoverer) kimi() {
	bareEnd := -2
	for i, seen := 0, 0; ; {
		k := indexFrom(r.text, kimiToken, i)
		if k < 0 {
			return
		}
		rest := r.text[k:]
		if !strings.HasPrefix(rest, kimiSecBegin) && !strings.HasPrefix(rest, kimiSecBegin1) && !strings.HasPrefix(rest, kimiCallBegin) || r.isClaimed(k) {
			// A stray end token, another family's <|tool_call|> or
			// <|tool_call>, reasoning, or another dialect's span.
			i = k + len(kimiToken)
			continue
		}
		if seen++; seen > maxMarkers {
			r.discard("kimi", k, len(r.text), "more than "+itoa(maxMarkers)+" Kimi tool-call sections")
			return
		}
		switch {
		case strings.HasPrefix(rest, kimiSecBegin), strings.HasPrefix(rest, kimiSecBegin1):
			body := k + len(kimiSecBegin)
			end := indexFrom(r.text, kimiSecEnd, body)
			closeLen := len(kimiSecEnd)
			if strings.HasPrefix(rest, kimiSecBegin1) {
				body = k + len(kimiSecBegin1)
				end, closeLen = indexFrom(r.text, kimiSecEnd1, body), len(kimiSecEnd1)
			}
			if end < 0 {
				r.truncated("kimi", k, "the Kimi tool-call section")
				return
			}
			r.claim(k, end+closeLen)
			r.kimiSection(k, end+closeLen, body, end)
			i = end + closeLen
		case strings.HasPrefix(rest, kimiCallBegin):
			// A call written without its section tokens.
			i = r.kimiCall(k, len(r.text), &bareEnd)
			if i < 0 {
				return
			}
		}
	}
}

// kimiSection decodes the calls in text[from:to], the body of a section
// that spans start..end.
func (r *recoverer) kimiSection(start, end, from, to int) {
	r.sectionCalls("kimi", kimiCallBegin, start, end, from, to, r.kimiCall,
		"calls in one Kimi section", "a Kimi tool-call section without a <|tool_call_begin|>")
}

// kimiCall decodes the call whose <|tool_call_begin|> is at start, bounded
// by to, and returns where scanning goes on, or -1 when the rest of the text
// was consumed as truncated. endCache keeps the search for <|tool_call_end|>
// linear over many unclosed calls.
func (r *recoverer) kimiCall(start, to int, endCache *int) int {
	body := start + len(kimiCallBegin)
	e := nextIndex(r.text[:to], kimiCallEnd, body, endCache)
	if n := indexFrom(r.text[:to], kimiCallBegin, body); e < 0 || (n >= 0 && n < e) {
		stop := to
		if n >= 0 {
			stop = n
		}
		if stop == len(r.text) {
			r.truncated("kimi", start, "the Kimi call")
			return -1
		}
		r.discard("kimi", start, stop, "a Kimi call without <|tool_call_end|> (truncated)")
		r.claim(start, stop)
		return stop
	}
	end := e + len(kimiCallEnd)
	r.claim(start, end)
	a := indexFrom(r.text[:e], kimiArgBegin, body)
	if a < 0 {
		r.discard("kimi", start, end, "no <|tool_call_argument_begin|> in the Kimi call")
		return end
	}
	// Kimi K2 may write its arguments as a Python dict ({'a': 1}).
	r.namedArgsIn("kimi", start, end, kimiName(strings.TrimSpace(r.text[body:a])), a+len(kimiArgBegin), e, true)
	return end
}

// kimiName turns a call id, functions.NAME:IDX, into NAME.
func kimiName(id string) string {
	id = strings.TrimPrefix(id, kimiFuncPrefix)
	if c := strings.LastIndexByte(id, ':'); c >= 0 && c+1 < len(id) && strings.Trim(id[c+1:], "0123456789") == "" {
		id = id[:c]
	}
	return id
}
