package ingest

import (
	"fmt"
	"strings"
)

// seqRange is the Toolgate-Seq values from..to, both included.
type seqRange struct{ from, to int }

func (r seqRange) String() string {
	if r.from == r.to {
		return fmt.Sprint(r.from)
	}
	return fmt.Sprintf("%d-%d", r.from, r.to)
}

// seqRanges writes the first ranges of rs, then how many values the rest
// hold: "2-4,7" or "1,3,5,...,19 and 12 more".
func seqRanges(rs []seqRange) string {
	const show = 10
	var b strings.Builder
	for i, r := range rs {
		if i == show {
			more := 0
			for _, r := range rs[show:] {
				more += r.to - r.from + 1
			}
			fmt.Fprintf(&b, " and %d more", more)
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// shortValue is s cut to at most n bytes of valid UTF-8, for a message
// that quotes a producer's header.
func shortValue(s string, n int) string {
	if len(s) <= n {
		return strings.ToValidUTF8(s, "?")
	}
	return strings.ToValidUTF8(s[:n], "?") + fmt.Sprintf("... (%d bytes)", len(s))
}
