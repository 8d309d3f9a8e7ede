package doccheck

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

var (
	atxHeading = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$`)
	// htmlAnchor is an explicit anchor: <a name="x"> or any id="x".
	htmlAnchor = regexp.MustCompile(`(?i)<a\s[^>]*\bname\s*=\s*"([^"]+)"|\bid\s*=\s*"([^"]+)"`)
	mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// Anchors returns the anchors a page has: one per heading as GitHub makes
// it (Slug, with -1, -2 … after a repeated one), and every explicit
// <a name> or id of its HTML.
func Anchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	lines := strings.Split(page, "\n")
	code := inFences(lines)
	for i, line := range lines {
		if code[i] {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]+m[2]] = true
		}
		text := ""
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			text = m[2]
		} else if i+1 < len(lines) && strings.TrimSpace(line) != "" && isSetextUnderline(lines[i+1]) {
			text = strings.TrimSpace(line)
		} else {
			continue
		}
		slug := Slug(text)
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// isSetextUnderline: a line of only = (or of only -, three or more) under
// a paragraph line makes it a heading.
func isSetextUnderline(line string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= 1 && (strings.Trim(t, "=") == "" || (len(t) >= 3 && strings.Trim(t, "-") == "")) && !strings.HasPrefix(line, "    ")
}

// Slug is GitHub's anchor of a heading's text: its rendered text (links as
// their text, code and emphasis marks and HTML tags dropped) in lower case,
// every character but letters, digits, marks, '_', '-' and spaces dropped,
// and each space made '-'.
func Slug(heading string) string {
	t := mdLinkText.ReplaceAllString(heading, "$1")
	t = htmlTag.ReplaceAllString(t, "")
	t = strings.NewReplacer("`", "", "*", "").Replace(t)
	var b strings.Builder
	for _, r := range strings.ToLower(t) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
