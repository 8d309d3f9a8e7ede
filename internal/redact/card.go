package redact

import "strings"

// span is a half-open byte range [start, end) of a string.
type span struct{ start, end int }

// redactCards replaces card numbers in s with Placeholder. A card number is
// 13 to 19 digits, written together or in groups joined by single spaces or
// dashes, that passes the Luhn check. Digit runs are found without regard to
// word boundaries, so "id4111111111111111" is caught too. A run of more than
// 19 digits with no separator (an order id, a hash) is not a card number.
func redactCards(s string) string {
	var b strings.Builder
	last := 0
	var groups []span
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		groups = groups[:0]
		j := i
		for {
			start := j
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			groups = append(groups, span{start, j})
			if j+1 < len(s) && (s[j] == ' ' || s[j] == '-') && isDigit(s[j+1]) {
				j++
				continue
			}
			break
		}
		for g := 0; g < len(groups); {
			end := cardEnd(s, groups, g)
			if end < 0 {
				g++
				continue
			}
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:groups[g].start])
			b.WriteString(Placeholder)
			last = groups[end-1].end
			g = end
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// cardEnd returns the end (exclusive group index) of the longest card
// number that starts at group g, or -1 when none does.
func cardEnd(s string, groups []span, g int) int {
	end, n := -1, 0
	for k := g; k < len(groups); k++ {
		n += groups[k].end - groups[k].start
		if n > 19 {
			break
		}
		if n >= 13 && luhn(s, groups[g:k+1]) {
			end = k + 1
		}
	}
	return end
}

// luhn reports whether the digits of the groups pass the Luhn check.
func luhn(s string, groups []span) bool {
	sum, double := 0, false
	for g := len(groups) - 1; g >= 0; g-- {
		for i := groups[g].end - 1; i >= groups[g].start; i-- {
			d := int(s[i] - '0')
			if double {
				d *= 2
				if d > 9 {
					d -= 9
				}
			}
			sum += d
			double = !double
		}
	}
	return sum%10 == 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
