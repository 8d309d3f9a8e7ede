package textcall

// taggedJSON recovers the JSON calls between open and close tags: one
// object, a list of objects, or objects separated by white space, ',' or
// ';'. With close "" a block runs to the next open or to the end and the
// JSON's own brackets end it; otherwise a block without close was cut off
// and is a Discard, even when its JSON looks whole.
func (r *recoverer) taggedJSON(format, open, close string) {
	r.blocks(format, open, close, r.jsonRegion)
}

// blocks finds the closed open…close blocks (closedBlock) not claimed yet,
// claims each and hands decode its span start..end and its body
// from..to; an unclosed block is a Discard.
func (r *recoverer) blocks(format, open, close string, decode func(format string, start, end, from, to int)) {
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
		decode(format, start, end, start+len(open), bodyEnd)
	}
}

// closedBlock bounds the block whose open tag is at start: its body ends at
// close, or, with close "", at the next open or the end of the text. A
// block not closed before the next open is a Discard claimed up to it; one
// not closed at all was cut off and claims the rest of the text. ok reports
// a closed block; end is where scanning goes on. closeCache keeps the close
// searches linear.
func (r *recoverer) closedBlock(format, open, close string, start int, closeCache *int) (bodyEnd, end int, ok bool) {
	body := start + len(open)
	n := indexFrom(r.text, open, body)
	if close == "" {
		if n < 0 {
			return len(r.text), len(r.text), true
		}
		return n, n, true
	}
	c := nextIndex(r.text, close, body, closeCache)
	switch {
	case c >= 0 && (n < 0 || c < n):
		return c, c + len(close), true
	case n >= 0:
		r.discard(format, start, n, open+" is not closed by "+close+" before the next "+open)
		r.claim(start, n)
		return n, n, false
	}
	r.discard(format, start, len(r.text), "the "+open+" block is not closed by "+close+" (truncated); its calls were not completed")
	r.claim(start, len(r.text))
	return len(r.text), len(r.text), false
}
