package textcall

import "strings"

// thinkTag is one reasoning notation: the text between open and close is
// the model's reasoning.
type thinkTag struct{ open, close string }

// nThinkTags is the number of thinkTags.
const nThinkTags = 9

// thinkTags are the reasoning notations of the families in use, from their
// chat templates and vLLM's reasoning parsers: <think> (Qwen3, DeepSeek-R1
// and V3.1+, GLM, Kimi K2, MiniMax M2, Hunyuan, ERNIE 4.5, Step-3, OLMo 3,
// EXAONE 4, ...), <thinking>, Seed-OSS <seed:think>, Magistral [THINK],
// Kimi-VL ◁think▷, Apertus <|inner_prefix|>, Gemma 4's <|channel>thought
// (its only channel), Command A Reasoning <|START_THINKING|> and MiniMax M3
// <mm:think>. Harmony's analysis channel is harmonyAnalysis, Granite 3.2's
// plain-text markers graniteThought.
func thinkTags() [nThinkTags]thinkTag {
	return [nThinkTags]thinkTag{
		{"<think>", "</think>"},
		{"<thinking>", "</thinking>"},
		{"<seed:think>", "</seed:think>"},
		{"[THINK]", "[/THINK]"},
		{"◁think▷", "◁/think▷"},
		{"<|inner_prefix|>", "<|inner_suffix|>"},
		{"<|channel>", "<channel|>"},
		{"<|START_THINKING|>", "<|END_THINKING|>"},
		{"<mm:think>", "</mm:think>"},
	}
}

// kimiSection starts Kimi K2's tool-call section, which ends a <think> the
// model never closed (vLLM's kimi_k2 reasoning parser reads it so).
const kimiSection = "<|tool_calls_section_begin|>"

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
//     says so, so that nothing is dropped silently. An unclosed <think>
//     ends at a Kimi K2 tool-call section (kimiSection) instead;
//   - a harmony message on the analysis channel (harmonyAnalysis);
//   - Granite 3.2's thought process, when both its markers open the text
//     (graniteThought).
//
// Text with no tag in it costs a look at its start and three searches for
// rare bytes (mayReason).
func (r *recoverer) reasoning() {
	t := r.text
	i := r.graniteThought()
	if !mayReason(t) {
		return
	}
	if end := orphanClose(t); end > i {
		r.claimReasoning(0, end)
		i = end
	}
	// Cached next positions keep the scan linear however the tags repeat.
	var opens, closes [nThinkTags]int
	for j := range opens {
		opens[j], closes[j] = -2, -2
	}
	harmony, kimi, stops := -2, -2, [5]int{-2, -2, -2, -2, -2}
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
			if g == 0 {
				if s := nextIndex(t, kimiSection, k+len(tag.open), &kimi); s >= 0 {
					r.claimReasoning(k, s)
					i = s
					continue
				}
			}
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
		if tagAfterLT(t[i:]) {
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

// tagAfterLT reports whether rest, the text after a '<', continues one of
// the '<' reasoning tags (thinkTags and harmony's analysis channel). One
// switch on its first byte keeps prose's '<' cheap.
func tagAfterLT(rest string) bool {
	if rest == "" {
		return false
	}
	switch rest[0] {
	case '/':
		rest = rest[1:]
		return strings.HasPrefix(rest, "think") || strings.HasPrefix(rest, "seed:think") || strings.HasPrefix(rest, "mm:think")
	case 't':
		return strings.HasPrefix(rest, "think")
	case 's':
		return strings.HasPrefix(rest, "seed:think")
	case 'm':
		return strings.HasPrefix(rest, "mm:think")
	case 'c':
		return strings.HasPrefix(rest, "channel|>") // Gemma 4's close
	case '|':
		rest = rest[1:]
		return strings.HasPrefix(rest, harmonyAnalysisTag[2:]) || strings.HasPrefix(rest, "channel>") ||
			strings.HasPrefix(rest, "inner_") || strings.HasPrefix(rest, "START_THINKING|>") || strings.HasPrefix(rest, "END_THINKING|>")
	}
	return false
}

// Granite 3.2's reasoning markers are plain text (vLLM's granite reasoning
// parser), with "Here's" for "Here is" in some quantized models.
const (
	graniteThoughtMarker  = " my thought process:"
	graniteResponseMarker = " my response:"
)

// graniteThought claims Granite 3.2's thought process, from its marker to
// the end of its response marker, and returns the end (0 when there is
// none). Being plain text, the markers count only as Granite writes them:
// the thought marker opens the text and a response marker follows it.
// Prose that only starts that way keeps its calls.
func (r *recoverer) graniteThought() int {
	t := r.text
	start := 0
	for start < len(t) && (t[start] == ' ' || t[start] == '\t' || t[start] == '\n' || t[start] == '\r') {
		start++
	}
	rest := t[start:]
	switch {
	case strings.HasPrefix(rest, "Here is"):
		rest = rest[len("Here is"):]
	case strings.HasPrefix(rest, "Here's"):
		rest = rest[len("Here's"):]
	default:
		return 0
	}
	if !strings.HasPrefix(rest, graniteThoughtMarker) {
		return 0
	}
	from := len(t) - len(rest) + len(graniteThoughtMarker)
	for at := from; ; {
		k := strings.Index(t[at:], graniteResponseMarker)
		if k < 0 {
			return 0
		}
		at += k
		if strings.HasSuffix(t[:at], "Here is") || strings.HasSuffix(t[:at], "Here's") {
			end := at + len(graniteResponseMarker)
			r.claimReasoning(start, end)
			return end
		}
		at += len(graniteResponseMarker)
	}
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
