package repair

import (
	"sort"
	"strings"
	"unicode"

	"github.com/toolgate/toolgate/internal/textdist"
)

// Closest returns the name in valid most similar to name, "" when valid is
// empty. Similarity is the edit distance between the names lower-cased with
// separators removed, or between their words in sorted order when that is
// smaller (so "invoice_create" finds "create_invoice"). Ties go to the
// lexically smallest name, so the answer does not depend on valid's order.
func Closest(name string, valid []string) string {
	best, bestD := "", -1
	a1, a2 := squash(name), sortedWords(name)
	for _, v := range valid {
		d := min(textdist.Distance(a1, squash(v)), textdist.Distance(a2, sortedWords(v)))
		if bestD < 0 || d < bestD || (d == bestD && v < best) {
			best, bestD = v, d
		}
	}
	return best
}

// words splits a tool name at separators and lower-to-upper case changes:
// "sendEmail", "send_email" and "send-email" all give [send email].
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return out
}

func squash(s string) string { return strings.Join(words(s), "") }

func sortedWords(s string) string {
	w := words(s)
	sort.Strings(w)
	return strings.Join(w, "")
}
