package textcall

// nemotron recovers NVIDIA Llama-Nemotron (Nano, Super, Ultra v1) and
// Nemotron-Nano-9B-v2 calls: a JSON list of {"name", "arguments"} objects
// between <TOOLCALL> and </TOOLCALL>. Nemotron 3 writes Qwen3-Coder XML
// inside <tool_call> instead.
func (r *recoverer) nemotron() {
	r.taggedJSON("nemotron", "<TOOLCALL>", "</TOOLCALL>")
}
