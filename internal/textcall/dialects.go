package textcall

// dialect is one notation models write calls in: name is the Call.Format it
// yields (a scanner may yield a second, e.g. hermes also finds qwen-xml
// inside <tool_call>), scan finds its calls and claims their spans.
type dialect struct {
	name string
	scan func(*recoverer)
}

// dialects lists every notation Recover scans, in the order it scans them.
// Order matters: a marker notation claims its spans first, so the looser
// scanners after it (fences, pythonic lists, JSON in prose) do not recover
// the same call twice. Adding a dialect is its file, one row here, and its
// fixtures.
func dialects() []dialect {
	return []dialect{
		{"deepseek", (*recoverer).deepseek},
		{"harmony", (*recoverer).harmony},
		{"hermes", (*recoverer).hermes},
		{"qwen-xml", (*recoverer).qwenXMLBare},
		{"mistral", (*recoverer).mistral},
		{"llama3", (*recoverer).pythonTag},
		{"fence", (*recoverer).fences},
		{"pythonic", (*recoverer).pythonicLists},
		{"json", (*recoverer).prose},
	}
}
