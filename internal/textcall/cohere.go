package textcall

// cohere recovers Cohere Command R7B / Command A calls: a JSON list of
// {"tool_call_id", "tool_name", "parameters"} objects between
// <|START_ACTION|> and <|END_ACTION|>. Command R's older
// "Action: ```json" block is a fence, which the fence dialect reads.
func (r *recoverer) cohere() {
	r.taggedJSON("cohere", "<|START_ACTION|>", "<|END_ACTION|>")
}
