package textcall

// granite recovers IBM Granite 3.x calls, <|tool_call|> followed by a JSON
// list of {"name", "arguments"} objects, which Phi-4-mini also writes. The
// list's own brackets end it: Granite writes no closing token, Phi-4-mini
// a <|/tool_call|> it often leaves out. Granite 4 writes hermes <tool_call>
// blocks instead.
func (r *recoverer) granite() {
	r.taggedJSON("granite", "<|tool_call|>", "")
}
