package seal

import "github.com/toolgate/toolgate/internal/call"

// Passed lists the gates e's seals say it passed since its last source
// seal, in order, stopping at the first gate without a seal after the one
// before it: what a replay may skip. It judges by the seals present and
// their order only (no keys); execute verifies the MACs. nil when e carries
// no source seal.
func Passed(e *call.Envelope) []string {
	src := -1
	for i, s := range e.Seals {
		if source(s.Stage) && s.Status == call.Received {
			src = i
		}
	}
	if src < 0 {
		return nil
	}
	passed := []string{}
	last := src
	for _, g := range Gates() {
		at := -1
		for i := src + 1; i < len(e.Seals); i++ {
			if s := e.Seals[i]; s.Stage == g && s.Status == Verdict(g) && s.Call == e.CallID {
				at = i
			}
		}
		if at < last {
			break
		}
		passed, last = append(passed, g), at
	}
	return passed
}
