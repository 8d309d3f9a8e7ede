// Package textcall recovers tool calls that a model wrote into its text
// instead of emitting native tool calls. It reads (dialects.go lists them,
// one file each):
//
//   - JSON calls: Hermes/Qwen <tool_call> blocks (Hermes-2-Pro's Python
//     dicts too), Mistral [TOOL_CALLS] (pre-v11 lists and v11+ NAME[ARGS]),
//     Llama 3.x <|python_tag|> and bare JSON, Llama 3.1 <function=NAME>{…},
//     Llama 4 pythonic and JSON, Granite <|tool_call|> and
//     <function_call>, Phi-4-mini functools[…], Jamba / Hunyuan / MiniMax-M1
//     <tool_calls>, Nemotron <TOOLCALL>, LongCat, Cohere <|START_ACTION|>,
//     InternLM <|action_start|><|plugin|>, functionary >>>NAME, Qwen-Agent
//     ✿FUNCTION✿, GigaChat's function call turn, Apertus <|tools_prefix|>
//     ({"NAME": args} objects), xLAM lists, markdown fences and JSON
//     objects floating in prose;
//   - special-token notations: DeepSeek V3 / V3.1 <｜tool▁call▁begin｜>,
//     DeepSeek V3.2 DSML (fullwidth or ASCII bars), harmony (gpt-oss),
//     Kimi K2 <|tool_calls_section_begin|> with functions.NAME:IDX ids,
//     FunctionGemma and Gemma 4 call:NAME{…} tokens (Gemma 4's also alone
//     on a line without its tokens, as Ollama reads it: bare.go);
//   - XML and parameter notations: Qwen3-Coder <function=NAME><parameter=…>,
//     Seed-OSS <seed:tool_call>, GLM-4.5/4.6/4.7 <arg_key>/<arg_value>,
//     Hunyuan v3 (Hy3) <tool_call>NAME<tool_sep> with GLM's pairs,
//     MiniMax M2 <minimax:tool_call><invoke>, bare <invoke> blocks, Muse
//     Glimmer <atem:function_calls><atem:invoke> and StepFun Step-3
//     <steptml:invoke>;
//   - pythonic calls: bracketed [f(a=1)] lists in prose, OLMo 3
//     <function_calls> (and, with Options.Known, its bare calls), MiniCPM <|tool_call_start|> lines, LFM2's
//     <|tool_call_start|>[f(a=1)]<|tool_call_end|> lists and Gemma 3
//     ```tool_code fences.
//
// A call is recovered only when its notation is complete (a hermes
// <tool_call> or a harmony message, whose end token servers often strip,
// only when its JSON is): truncated or malformed text inside a marker is a
// Discard with a reason, never completed and never dropped in silence. A
// peer's tool-call marker that no dialect read (unread.go: Laguna's
// <user>NAME<arg_key> spelling, a stray <atem:invoke>, ...) is a Discard
// too: text that carries one never passes as plain text.
//
// Text inside reasoning (<think>…</think>, <seed:think>, harmony's analysis
// channel, ...: reasoning.go) is never a source of calls.
//
// Recover only finds and decodes calls. It does not know the tool registry:
// the caller must check that each call names a registered tool and passes its
// schema, and must run it only on the assistant's own output.
package textcall

import (
	"slices"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/canon"
	"github.com/toolgate/toolgate/internal/parse"
)

// Bounds of one Recover run.
const (
	// MaxTextBytes is the longest text scanned; the rest is discarded.
	MaxTextBytes = 1 << 20
	// MaxCalls is the largest number of calls returned; more are discarded.
	MaxCalls = parse.DefaultMaxCalls
	// scanBudgetFactor bounds the bytes the prose scanner may decode, as a
	// multiple of the text length, so nested or unbalanced braces cannot
	// make the scan quadratic.
	scanBudgetFactor = 8
	excerptBytes     = 80
)

// Call is one recovered tool call. Arguments is the canonical JSON of an
// object. Format names the notation it was written in, one of the dialects
// (dialects.go): hermes, qwen-xml, mistral, llama3 (after <|python_tag|>),
// pythonic, deepseek, harmony, fence (a markdown code fence) or json
// (floating in prose). Start and End are the byte span of the call's
// notation in the text.
type Call struct {
	Name      string
	Arguments []byte
	Format    string
	Start     int
	End       int
	// Params holds every top-level argument as its raw text, set by each
	// dialect whose values are untyped text (qwen-xml <parameter=…>, GLM
	// <arg_value>, <invoke> parameters, ...): a dialect of that kind must
	// set it. Arguments then holds only a guess (text that parses as a
	// JSON number, boolean, null, object or array taken as such); the
	// parse gate re-types Params by the tool's schema (TypedArgs), so
	// <parameter=zip>94107</parameter> stays "94107" for a string zip,
	// and a parameter the schema gives no type keeps its text.
	Params map[string]string
	// grammarTyped says the dialect's grammar typed the values of
	// Arguments (Gemma), so a parameter the schema gives no type keeps
	// that value rather than its text (TypedArgs).
	grammarTyped bool
}

// Discard is something written as a tool call that is not one: truncated
// or malformed JSON, no tool name, arguments that are not an object. It is
// reported so that nothing is dropped silently.
type Discard struct {
	Format  string
	Start   int
	End     int
	Excerpt string
	Reason  string
}

// Recover finds every call in text, in text order. Text inside tool-call
// markers that does not decode to a call is a Discard; JSON in prose that
// is not call-shaped (no name and no arguments key) is neither. Truncated
// JSON is never completed: it is a Discard. Recover is pure and bounded:
// at most MaxTextBytes are scanned, with linear marker searches and a prose
// decoding budget proportional to the text.
func Recover(text string) (calls []Call, discarded []Discard) {
	return RecoverWith(text, Options{})
}

// Options are what the caller knows of the request a text answers.
type Options struct {
	// Known reports whether a tool of that name was offered. With it, a
	// text that is nothing but bare pythonic calls of known tools
	// (OLMo 3's calls without <function_calls>) is read; without it such
	// text is prose.
	Known func(name string) bool
}

// RecoverWith is Recover, with what the caller knows of the request.
func RecoverWith(text string, opts Options) (calls []Call, discarded []Discard) {
	r := &recoverer{known: opts.Known}
	if len(text) > MaxTextBytes {
		r.discard("text", MaxTextBytes, len(text), "text longer than "+itoa(MaxTextBytes)+" bytes; the rest was not scanned")
		text = text[:MaxTextBytes]
	}
	r.text = text
	r.data = []byte(text)
	r.budget = scanBudgetFactor*len(text) + 64<<10
	r.reasoning()
	for _, d := range dialects() {
		d.scan(r)
	}
	r.bare()
	r.unread()
	slices.SortStableFunc(r.calls, func(a, b Call) int { return a.Start - b.Start })
	slices.SortStableFunc(r.discards, func(a, b Discard) int { return a.Start - b.Start })
	if len(r.calls) > MaxCalls {
		for _, c := range r.calls[MaxCalls:] {
			r.discard(c.Format, c.Start, c.End, "more than "+itoa(MaxCalls)+" calls in one text")
		}
		r.calls = r.calls[:MaxCalls]
	}
	return r.calls, r.discards
}

type span struct{ start, end int }

type recoverer struct {
	text     string
	data     []byte
	calls    []Call
	discards []Discard
	claimed  []span
	thought  []span // reasoning (reasoning.go), a subset of claimed
	budget   int
	known    func(name string) bool // Options.Known; nil when not told
}

// claim marks text[start:end] as consumed by a marker format, so later
// scanners do not recover the same call twice.
func (r *recoverer) claim(start, end int) {
	r.claimed = append(r.claimed, span{start, end})
}

func (r *recoverer) isClaimed(pos int) bool {
	for _, s := range r.claimed {
		if pos >= s.start && pos < s.end {
			return true
		}
	}
	return false
}

// discard records a Discard, unless it starts inside reasoning: a draft
// the model abandoned while thinking is neither a call nor a failed one.
func (r *recoverer) discard(format string, start, end int, reason string) {
	if format != "text" && r.inReasoning(start) {
		return
	}
	r.discards = append(r.discards, Discard{Format: format, Start: start, End: end, Excerpt: excerpt(r.text, start), Reason: reason})
}

// add records a call and reports whether it did. A call that starts inside
// reasoning is never recorded, whichever scanner found it.
func (r *recoverer) add(format string, start, end int, name string, args map[string]any) bool {
	if r.inReasoning(start) {
		return false
	}
	c, err := canon.Value(args)
	if err != nil {
		r.discard(format, start, end, "arguments cannot be encoded: "+err.Error())
		return false
	}
	r.calls = append(r.calls, Call{Name: name, Arguments: c, Format: format, Start: start, End: end})
	return true
}

// spend takes n bytes from the decoding budget of the prose and pythonic
// scanners and reports whether any budget was left. The first time it runs
// out a Discard says so.
func (r *recoverer) spend(n int, at int) bool {
	if r.budget < 0 {
		return false
	}
	r.budget -= n
	if r.budget < 0 {
		r.discard("text", at, len(r.text), "scan budget exhausted (deeply nested or unbalanced text); the rest of the text was not searched for calls")
		return false
	}
	return true
}

// addValue records the call (or list of calls) in a decoded JSON value.
// Inside a marker every element that is not a call is a Discard.
func (r *recoverer) addValue(format string, start, end int, v any) {
	list, isList := v.([]any)
	if !isList {
		list = []any{v}
	} else if len(list) == 0 {
		r.discard(format, start, end, "empty list of calls")
	}
	for _, e := range list {
		name, args, reason := unpack(e)
		if reason != "" {
			r.discard(format, start, end, reason)
			continue
		}
		r.add(format, start, end, name, args)
	}
}

// excerpt returns up to excerptBytes of text from start, cut on a rune
// boundary.
func excerpt(text string, start int) string {
	if start >= len(text) {
		return ""
	}
	end := min(start+excerptBytes, len(text))
	// Back to a rune boundary, by at most a rune's length and never before
	// start: invalid UTF-8 can be continuation bytes all the way.
	for n := 0; n < utf8.UTFMax-1 && end > start && end < len(text) && !utf8.RuneStart(text[end]); n++ {
		end--
	}
	return text[start:end]
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// reasonOf phrases a parse error for a Discard: its code, message and the
// excerpt around the failure (positions inside the JSON are left out, the
// Discard's span locates it in the text).
func reasonOf(err *parse.Error) string {
	return err.Code + ": " + err.Message + ": " + err.Excerpt
}
