package textcall

// step3 recovers StepFun Step-3 calls: between <｜tool_calls_begin｜> and
// <｜tool_calls_end｜> (U+FF5C bars), each <｜tool_call_begin｜>function
// <｜tool_sep｜> holds a <steptml:invoke name="NAME"> with
// <steptml:parameter name="KEY">value</steptml:parameter> elements.
func (r *recoverer) step3() {
	r.invokeBlocks("step3", "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "steptml:")
}
