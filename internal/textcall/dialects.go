package textcall

import "sync"

// dialect is one notation models write calls in: name is the Call.Format it
// yields (a scanner may yield a second, e.g. hermes also finds qwen-xml
// inside <tool_call>), scan finds its calls and claims their spans. A scan
// skips a marker whose start isClaimed: the model's reasoning is claimed
// before the first scan (reasoning.go), and add drops a call found there.
type dialect struct {
	name string
	scan func(*recoverer)
}

// dialects lists every notation Recover scans, in the order it scans them.
// Order matters: a marker notation claims its spans first, so the looser
// scanners after it (fences, pythonic lists, JSON in prose) do not recover
// the same call twice. Adding a dialect is its file, one row here, and its
// fixtures.
//
// The list is built once: a fresh slice of this size on every Recover call
// would be a heap allocation for each text.
var dialects = sync.OnceValue(func() []dialect {
	return []dialect{
		{"deepseek", (*recoverer).deepseek},
		{"harmony", (*recoverer).harmony},
		{"kimi", (*recoverer).kimi},
		{"deepseek-dsml", (*recoverer).dsml},
		{"hunyuan", (*recoverer).hunyuan},
		{"glm", (*recoverer).glm},
		{"seed-oss", (*recoverer).seedOSS},
		{"apertus", (*recoverer).apertus},
		{"olmo3", (*recoverer).olmo3},
		{"gemma", (*recoverer).gemma},
		{"hermes", (*recoverer).hermes},
		{"llama3-function", (*recoverer).llama3Function},
		{"qwen-xml", (*recoverer).qwenXMLBare},
		{"mistral", (*recoverer).mistral},
		{"llama3", (*recoverer).pythonTag},
		{"minimax", (*recoverer).minimax},
		{"invoke", (*recoverer).invoke},
		{"glimmer", (*recoverer).glimmer},
		{"step3", (*recoverer).step3},
		{"granite", (*recoverer).granite},
		{"granite-fc", (*recoverer).graniteFC},
		{"phi4-mini", (*recoverer).phi4mini},
		{"jamba", (*recoverer).jamba},
		{"nemotron", (*recoverer).nemotron},
		{"longcat", (*recoverer).longcat},
		{"cohere", (*recoverer).cohere},
		{"internlm", (*recoverer).internlm},
		{"llama4", (*recoverer).llama4},
		{"functionary", (*recoverer).functionary},
		{"qwen-agent", (*recoverer).qwenAgent},
		{"gigachat", (*recoverer).gigachat},
		{"lfm2", (*recoverer).lfm2},
		{"minicpm", (*recoverer).minicpm},
		{"fence", (*recoverer).fences},
		{"pythonic", (*recoverer).pythonicLists},
		{"json", (*recoverer).prose},
	}
})
