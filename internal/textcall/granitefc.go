package textcall

// graniteFC recovers granite-20b-functioncalling calls: each call is
// <function_call> followed by one JSON object, with no closing tag.
func (r *recoverer) graniteFC() {
	r.taggedJSON("granite-fc", "<function_call>", "")
}
