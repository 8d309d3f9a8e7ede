package textcall

// A marker notation whose closing token is missing was cut off: the model
// ran out of tokens or the server stopped it. Its calls are Discards, never
// completed, even when the JSON or the parameters inside look whole, since a
// sibling call or the rest of an argument may be what was lost.

// truncated discards the notation at text[start:] that is not closed and
// claims it to the end of the text, so no looser scanner recovers a call
// from inside it.
func (r *recoverer) truncated(format string, start int, what string) {
	r.discard(format, start, len(r.text), what+" is not closed (truncated); the call was not completed")
	r.claim(start, len(r.text))
}

// relabel sets Format on the calls and discards recorded since the counts
// calls and discards were taken, for a dialect that reuses another's
// decoder (Seed-OSS decodes its <function=…> blocks as Qwen3-Coder's).
func (r *recoverer) relabel(format string, calls, discards int) {
	for i := calls; i < len(r.calls); i++ {
		r.calls[i].Format = format
	}
	for i := discards; i < len(r.discards); i++ {
		r.discards[i].Format = format
	}
}

// sectionCalls decodes each call beginning with callBegin in text[from:to],
// the body of a section spanning start..end, with call (which returns where
// scanning goes on, or -1 when the rest was consumed as truncated). A
// section with more than maxMarkers calls is a Discard saying "more than N
// <tooMany>", one without a call a Discard saying empty.
func (r *recoverer) sectionCalls(format, callBegin string, start, end, from, to int, call func(start, to int, endCache *int) int, tooMany, empty string) {
	nextEnd := -2
	n := 0
	for p := from; ; n++ {
		c := indexFrom(r.text[:to], callBegin, p)
		if c < 0 {
			break
		}
		if n == maxMarkers {
			r.discard(format, c, to, "more than "+itoa(maxMarkers)+" "+tooMany)
			return
		}
		if p = call(c, to, &nextEnd); p < 0 {
			return
		}
	}
	if n == 0 {
		r.discard(format, start, end, empty)
	}
}
