package textcall

// longcat recovers Meituan LongCat-Flash calls: hermes-style JSON inside
// <longcat_tool_call>…</longcat_tool_call>.
func (r *recoverer) longcat() {
	r.taggedJSON("longcat", "<longcat_tool_call>", "</longcat_tool_call>")
}
