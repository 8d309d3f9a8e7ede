package textcall

// minimax recovers MiniMax M2 / M2.1 / M2.5 calls:
//
//	<minimax:tool_call>
//	<invoke name="NAME">
//	<parameter name="KEY">value</parameter>
//	</invoke>
//	</minimax:tool_call>
//
// with one or more invokes in a block. A block or an invoke without its
// closing tag was cut off: a Discard.
func (r *recoverer) minimax() {
	r.invokeBlocks("minimax", "<minimax:tool_call>", "</minimax:tool_call>", "")
}

// invokeBlocks finds the closed open…close blocks and decodes the invokes
// in each; an unclosed block is a Discard (closedBlock).
func (r *recoverer) invokeBlocks(format, open, close, prefix string) {
	r.blocks(format, open, close, func(format string, start, end, from, to int) {
		r.invokeXML(format, prefix, start, end, from, to)
	})
}
