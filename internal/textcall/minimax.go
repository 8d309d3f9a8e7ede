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
	closeCache := -2
	for i, seen := 0, 0; ; seen++ {
		start := indexFrom(r.text, open, i)
		if start < 0 {
			return
		}
		if seen == maxMarkers {
			r.discard(format, start, len(r.text), "more than "+itoa(maxMarkers)+" "+open+" markers")
			return
		}
		if r.isClaimed(start) {
			i = start + len(open)
			continue
		}
		bodyEnd, end, ok := r.closedBlock(format, open, close, start, &closeCache)
		i = end
		if !ok {
			continue
		}
		r.claim(start, end)
		r.invokeXML(format, prefix, start, end, start+len(open), bodyEnd)
	}
}
