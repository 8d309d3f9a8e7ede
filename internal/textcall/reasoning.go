package textcall

import "strings"

// thinkTag is one reasoning notation: the text between open and close is
// the model's reasoning.
type thinkTag struct{ open, close string }

// thinkTags are the reasoning notations of the families in use: <think>
// (Qwen3, DeepSeek-R1, GLM, Kimi, MiniMax, Hunyuan, OLMo 3 Think, ...),
// <thinking>, Seed-OSS <seed:think>, Magistral [THINK] and Kimi-VL
// ◁think▷. Harmony's analysis channel is harmonyAnalysis.
func thinkTags() [5]thinkTag {
	return [5]thinkTag{
		{"<think>", "</think>"},
		{"<thinking>", "</thinking>"},
		{"<seed:think>", "</seed:think>"},
		{"[THINK]", "[/THINK]"},
		{"◁think▷", "◁/think▷"},
	}
}

const harmonyAnalysisTag = "<|channel|>analysis"

// reasoning claims the model's reasoning before any dialect scans, so no
// call is recovered from inside it: a call drafted while thinking and then
// emitted for real is one call, not two. A reasoning span is
//   - a closed block, <think>…</think> and the other thinkTags, anywhere;
//   - the text before a close tag that no open tag precedes, when the tag
//     ends a line or is followed by markup: the chat template put the open
//     tag in the prompt (Qwen3 and DeepSeek-R1 do), so the output starts
//     inside the reasoning;
//   - from an open tag at the start of a line to the end of the text when
//     it is never closed: the model never got to its answer. A Discard
//     says so, so that nothing is dropped silently;
//   - a harmony message on the analysis channel (harmonyAnalysis).
//
// Text with no tag in it costs three searches for rare bytes (mayReason).
func (r *recoverer) reasoning() {
	t := r.text
	if !mayReason(t) {
		return
	}
	i := 0
	if end := orphanClose(t); end > 0 {
		r.claimReasoning(0, end)
		i = end
	}
	// Cached next positions keep the scan linear however the tags repeat.
	opens, closes := [5]int{-2, -2, -2, -2, -2}, [5]int{-2, -2, -2, -2, -2}
	harmony, stops := -2, [5]int{-2, -2, -2, -2, -2}
	tags := thinkTags()
	for seen := 0; ; seen++ {
		k, g := -1, 0
		for j := range tags {
			if p := nextIndex(t, tags[j].open, i, &opens[j]); p >= 0 && (k < 0 || p < k) {
				k, g = p, j
			}
		}
		h := nextIndex(t, harmonyAnalysisTag, i, &harmony)
		if k < 0 && h < 0 {
			return
		}
		if seen == maxMarkers {
			at := min(uint(k), uint(h)) // the -1 of one that is absent is the largest uint
			r.discard("reasoning", int(at), len(t), "more than "+itoa(maxMarkers)+" reasoning tags: the rest of the text is not searched for calls")
			r.claimReasoning(int(at), len(t))
			return
		}
		if h >= 0 && (k < 0 || h < k) {
			i = r.harmonyAnalysis(h, i, &stops)
			continue
		}
		tag := tags[g]
		if c := nextIndex(t, tag.close, k+len(tag.open), &closes[g]); c >= 0 {
			r.claimReasoning(k, c+len(tag.close))
			i = c + len(tag.close)
			continue
		}
		if lineStart(t, k) {
			r.discard("reasoning", k, len(t), "the reasoning opened by "+tag.open+" is never closed: the model gave no answer after it, and nothing in it is taken as a call")
			r.claimReasoning(k, len(t))
			return
		}
		// An unclosed tag inside a line is text (a value that mentions it).
		i = k + len(tag.open)
	}
}

// mayReason reports whether t may hold a reasoning tag. It looks only
// around bytes rare in prose ('<', "K]", '◁'), so that text without a tag
// is not searched for "think" (t and h are among the commonest bytes).
func mayReason(t string) bool {
	for i := 0; ; {
		k := strings.IndexByte(t[i:], '<')
		if k < 0 {
			break
		}
		i += k + 1
		rest := t[i:]
		rest = strings.TrimPrefix(rest, "/")
		if strings.HasPrefix(rest, "think") || strings.HasPrefix(rest, "seed:think") || strings.HasPrefix(rest, harmonyAnalysisTag[1:]) {
			return true
		}
	}
	// [THINK] and [/THINK] by their "K]": '[' is common in prose, 'K' is not.
	for i := 0; ; {
		k := strings.Index(t[i:], "K]")
		if k < 0 {
			break
		}
		i += k + 2
		if strings.HasSuffix(t[:i], "[THINK]") || strings.HasSuffix(t[:i], "[/THINK]") {
			return true
		}
	}
	return strings.Contains(t, "◁")
}

// claimReasoning claims text[start:end] as reasoning: scanners skip it, and
// add and discard drop what a scanner still finds starting inside it.
func (r *recoverer) claimReasoning(start, end int) {
	r.claim(start, end)
	r.thought = append(r.thought, span{start, end})
}

// inReasoning reports whether pos lies in a reasoning span.
func (r *recoverer) inReasoning(pos int) bool {
	for _, s := range r.thought {
		if pos >= s.start && pos < s.end {
			return true
		}
	}
	return false
}

// orphanClose returns the end of the first close tag that no open tag of
// its kind precedes and that ends a line or is followed by markup ('<' or
// '['); 0 when there is none.
func orphanClose(t string) int {
	best := 0
	for _, g := range thinkTags() {
		c := strings.Index(t, g.close)
		if c < 0 || best > 0 && c+len(g.close) >= best {
			continue
		}
		if o := strings.Index(t, g.open); o >= 0 && o < c {
			continue
		}
		end := c + len(g.close)
		q := end
		for q < len(t) && (t[q] == ' ' || t[q] == '\t') {
			q++
		}
		if q == len(t) || t[q] == '\n' || t[q] == '\r' || t[q] == '<' || t[q] == '[' || lineStart(t, c) {
			best = end
		}
	}
	return best
}

// lineStart reports whether only spaces or tabs stand between the start of
// text[p]'s line and p.
func lineStart(t string, p int) bool {
	for p > 0 && (t[p-1] == ' ' || t[p-1] == '\t') {
		p--
	}
	return p == 0 || t[p-1] == '\n' || t[p-1] == '\r'
}

// harmonyAnalysis claims the harmony message whose channel tag is at h:
// from its <|start|> (or the tag) to its <|end|>, <|call|> or <|return|>,
// or to the next message. It returns where scanning goes on. A message to
// functions.X on the analysis channel is reasoning too (gpt-oss calls
// functions on the commentary channel): a Discard says so. So does a
// message never closed.
func (r *recoverer) harmonyAnalysis(h, from int, stops *[5]int) int {
	t := r.text
	after := h + len(harmonyAnalysisTag)
	if after < len(t) && isNameByte(t[after]) {
		return after // another channel name that starts with "analysis"
	}
	start := h
	if s := strings.LastIndex(t[from:h], "<|start|>"); s >= 0 {
		s += from
		if m := t[s:h]; !strings.Contains(m, "<|end|>") && !strings.Contains(m, "<|call|>") && !strings.Contains(m, "<|return|>") {
			start = s
		}
	}
	end, closed := len(t), false
	for j, stop := range [5]string{"<|end|>", "<|call|>", "<|return|>", "<|start|>", "<|channel|>"} {
		if k := nextIndex(t, stop, after, &stops[j]); k >= 0 && k < end {
			end, closed = k, true
			if stop != "<|start|>" && stop != "<|channel|>" {
				end = k + len(stop)
			}
		}
	}
	header := t[start:end]
	if m := strings.Index(header, "<|message|>"); m >= 0 {
		header = header[:m]
	}
	if at := strings.Index(header, "to=functions."); at >= 0 {
		q := at + len("to=")
		for q < len(header) && isNameByte(header[q]) {
			q++
		}
		r.discard("harmony", start, end, "a message to "+header[at+len("to="):q]+" on the analysis channel is reasoning, not a call (gpt-oss calls functions on the commentary channel)")
	} else if !closed {
		r.discard("reasoning", start, end, "the harmony analysis message is never closed: the model gave no answer after it, and nothing in it is taken as a call")
	}
	r.claimReasoning(start, end)
	return max(end, after)
}
