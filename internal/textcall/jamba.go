package textcall

// jamba recovers <tool_calls>…</tool_calls> blocks: AI21 Jamba 1.5–1.7 and
// Tencent Hunyuan-A13B write a JSON list of {"name", "arguments"} objects
// in one block, MiniMax-M1 one JSON object a line.
func (r *recoverer) jamba() {
	r.taggedJSON("jamba", "<tool_calls>", "</tool_calls>")
}
