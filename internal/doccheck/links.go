package doccheck

import (
	"regexp"
	"strings"
)

// Link is one link of a page: its target as written and its line.
type Link struct {
	Target string
	Line   int
}

var (
	// inlineLink is the target of [text](target "title") and
	// ![alt](target): the part before a space or the closing parenthesis.
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// refDef is a reference definition: [label]: target.
	refDef = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$`)
	// htmlLink is an href or src attribute of inline HTML.
	htmlLink = regexp.MustCompile(`(?i)\b(?:href|src)\s*=\s*"([^"]*)"`)
	// codeSpan is inline code, whose text is not a link.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
)

// Links returns the links of a Markdown page outside fenced code blocks
// and code spans.
func Links(page string) []Link {
	var out []Link
	lines := strings.Split(page, "\n")
	code := inFences(lines)
	for i, line := range lines {
		if code[i] {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, re := range []*regexp.Regexp{inlineLink, refDef, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				out = append(out, Link{Target: m[1], Line: i + 1})
			}
		}
	}
	return out
}

// inFences reports for each line whether it is part of a fenced code block,
// its fence lines included.
func inFences(lines []string) []bool {
	code := make([]bool, len(lines))
	fence := ""
	for i, line := range lines {
		if f := fenceOf(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence):
				fence = ""
			}
			code[i] = true
			continue
		}
		code[i] = fence != ""
	}
	return code
}

// fenceOf is the fence a line opens or closes (``` or ~~~, as long as
// written), or "".
func fenceOf(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return ""
	}
	for _, c := range []string{"`", "~"} {
		n := len(t) - len(strings.TrimLeft(t, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// External reports whether target leaves the repository: a URL with a
// scheme (https:, mailto:) or a protocol-relative one.
func External(target string) bool {
	if strings.HasPrefix(target, "//") {
		return true
	}
	i := strings.IndexAny(target, ":/#?")
	return i > 0 && target[i] == ':'
}
