package textcall

// gigachat recovers GigaChat 3 calls: the assistant turn "function call",
// the <|role_sep|> token, a newline, then one JSON object {"name",
// "arguments"}, ended by its own brackets.
func (r *recoverer) gigachat() {
	r.taggedJSON("gigachat", "function call<|role_sep|>", "")
}
