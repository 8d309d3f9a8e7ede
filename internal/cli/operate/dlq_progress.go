package operate

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progressBar shows how far each replay phase has come. On a terminal it
// redraws one bar per phase; elsewhere (a pipe, a CI log) it writes one
// plain line when a phase ends, and never a carriage return.
type progressBar struct {
	w           io.Writer
	tty         bool
	phase       string
	done, total int
	last        time.Time
}

// phaseLabel is the label a phase's bar starts with, padded to one width.
func phaseLabel(phase string) string {
	switch phase {
	case "publish":
		return "replaying"
	case "wait":
		return "outcomes "
	}
	return ""
}

func (b *progressBar) update(phase string, done, total int) {
	if phase != b.phase && b.phase != "" {
		b.end()
	}
	b.phase, b.done, b.total = phase, done, total
	if !b.tty {
		return
	}
	// Redraw at most every 50ms, and always at the end of a phase.
	if done != total && time.Since(b.last) < 50*time.Millisecond {
		return
	}
	b.last = time.Now()
	const width = 30
	filled := 0
	if total > 0 {
		filled = min(done*width/total, width)
	}
	fmt.Fprintf(b.w, "\r%s [%s%s] %d/%d", phaseLabel(phase), strings.Repeat("#", filled), strings.Repeat("-", width-filled), done, total)
}

// end closes the current phase's line.
func (b *progressBar) end() {
	if b.tty {
		fmt.Fprintln(b.w)
		return
	}
	fmt.Fprintf(b.w, "%s %d/%d\n", strings.TrimSpace(phaseLabel(b.phase)), b.done, b.total)
}

func (b *progressBar) finish() {
	if b.phase != "" {
		b.end()
	}
	b.phase = ""
}
