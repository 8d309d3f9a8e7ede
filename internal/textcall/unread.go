package textcall

import (
	"strings"
	"sync"
)

// peerMarker is a token that opens a tool call in some model's notation:
// text that carries one must yield a call or a Discard, never pass as
// plain text. close, when set, ends the attempt's reported span.
type peerMarker struct {
	family, open, close string
	// follow, when set, must come after open and a tool name for the
	// marker to count (Laguna's <user>NAME<arg_key>, where <user> alone
	// is prose).
	follow string
}

// peerMarkers lists the opening tokens of the notations toolgate reads and
// of those it knows but does not read. Only tokens no prose writes: special
// tokens and namespaced tags.
var peerMarkers = sync.OnceValue(func() []peerMarker {
	return []peerMarker{
		{family: "kimi", open: kimiSecBegin, close: kimiSecEnd},
		{family: "kimi", open: kimiSecBegin1, close: kimiSecEnd1},
		{family: "kimi", open: kimiCallBegin, close: kimiCallEnd},
		{family: "deepseek", open: dsCallsBegin, close: dsCallsEnd},
		{family: "deepseek", open: dsCallBegin, close: dsCallEnd},
		{family: "deepseek", open: "<|tool▁calls▁begin|>", close: "<|tool▁calls▁end|>"},
		{family: "deepseek", open: "<|tool▁call▁begin|>", close: "<|tool▁call▁end|>"},
		{family: "deepseek-dsml", open: "<｜DSML｜function_calls>", close: "</｜DSML｜function_calls>"},
		{family: "deepseek-dsml", open: "<|DSML|function_calls>", close: "</|DSML|function_calls>"},
		{family: "glimmer", open: "<" + glimmerPrefix + "function_calls>", close: "</" + glimmerPrefix + "function_calls>"},
		{family: "glimmer", open: "<" + glimmerPrefix + "invoke", close: "</" + glimmerPrefix + "invoke>"},
		{family: "laguna", open: "<user>", close: "</user>", follow: glmKey},
		{family: "lfm2", open: lfmOpen, close: lfmClose},
		{family: "minimax", open: "<minimax:tool_call>", close: "</minimax:tool_call>"},
		{family: "seed-oss", open: "<seed:tool_call>", close: "</seed:tool_call>"},
		{family: "step3", open: "<steptml:invoke", close: "</steptml:invoke>"},
		{family: "hunyuan", open: hySep, close: glmClose},
		{family: "hunyuan", open: "<tool_calls:opensource>", close: "</tool_calls:opensource>"}, // Hy4-preview
		{family: "mistral", open: "[TOOL_CALLS]"},
		{family: "nemotron", open: "<TOOLCALL>", close: "</TOOLCALL>"},
		{family: "longcat", open: "<longcat_tool_call>", close: "</longcat_tool_call>"},
		{family: "cohere", open: "<|START_ACTION|>", close: "<|END_ACTION|>"},
		{family: "internlm", open: "<|action_start|><|plugin|>", close: "<|action_end|>"},
		{family: "apertus", open: "<|tools_prefix|>", close: "<|tools_suffix|>"},
		{family: "gemma", open: "<start_function_call>", close: "<end_function_call>"},
		{family: "gemma", open: "<|tool_call>", close: "<tool_call|>"},
		{family: "granite", open: "<|tool_call|>"},
		{family: "qwen-agent", open: "✿FUNCTION✿"},
	}
})

// unread records, after every dialect has scanned, each peer marker that
// no call, Discard or claimed span covers: the model wrote a call there
// that no scanner could read, and saying so is the rule (never silent).
func (r *recoverer) unread() {
	for _, m := range peerMarkers() {
		for i, seen := 0, 0; ; seen++ {
			k := indexFrom(r.text, m.open, i)
			if k < 0 || seen == maxMarkers {
				break
			}
			i = k + len(m.open)
			if m.follow != "" && !followsName(r.text, i, m.follow) {
				continue
			}
			if r.isClaimed(k) || r.covered(k) {
				continue
			}
			end := i
			if m.close != "" {
				if c := indexFrom(r.text, m.close, i); c >= 0 {
					end = c + len(m.close)
				}
			}
			r.discard(m.family, k, end, "the text carries "+quote(m.open)+", a tool-call marker of "+m.family+", but no call could be read from it; nothing was run")
			r.claim(k, end)
			i = end
		}
	}
}

// covered reports whether pos is inside a recorded call or Discard.
func (r *recoverer) covered(pos int) bool {
	for _, c := range r.calls {
		if pos >= c.Start && pos < c.End {
			return true
		}
	}
	for _, d := range r.discards {
		if pos >= d.Start && pos < d.End {
			return true
		}
	}
	return false
}

// followsName reports whether text[p:] is a tool name, optional white
// space, then tag.
func followsName(text string, p int, tag string) bool {
	q := p
	for q < len(text) && isNameByte(text[q]) {
		q++
	}
	return q > p && strings.HasPrefix(text[skipSpace(text, q):], tag)
}
