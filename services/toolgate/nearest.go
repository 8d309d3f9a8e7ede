package main

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/textdist"
)

// nearest is the candidate closest to word by edit distance, if it is
// close enough to be a slip of the keyboard (at most 1 edit for words of
// up to 3 letters, else 2; a swap of two letters is 2), or "".
func nearest(word string, candidates []string) string {
	limit := 2
	if len([]rune(word)) <= 3 {
		limit = 1
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := textdist.Distance(strings.ToLower(word), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// unknownCommand is dispatch's answer to a command that does not exist:
// the nearest one when it is close, else the list of commands; never the
// whole usage, which buried the one line that mattered.
func unknownCommand(name string) string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if n := nearest(name, names); n != "" {
		return fmt.Sprintf("toolgate: unknown command %q: did you mean %q? (toolgate help lists every command)\n", name, n)
	}
	return fmt.Sprintf("toolgate: unknown command %q; the commands are %s (toolgate help COMMAND for one)\n", name, strings.Join(names, ", "))
}
