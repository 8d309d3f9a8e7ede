package schema

import (
	"strconv"
	"strings"
)

// Problem is one way a document fails its schema.
type Problem struct {
	// Path is a JSON pointer to the offending value, such as /line_items/0/quantity;
	// "" is the document itself. For a missing required property it points at the
	// property that should be there.
	Path string `json:"path"`
	// Keyword is the schema keyword that failed: type, required, minimum, ...
	Keyword string `json:"keyword"`
	// Message says what is wrong, in words a model can act on.
	Message string `json:"message"`
}

// String returns "line_items/0/quantity: must be > 0, got 0 (exclusiveMinimum)"; the
// document itself is written "(root)".
func (p Problem) String() string {
	path := strings.TrimPrefix(p.Path, "/")
	if p.Path == "" {
		path = "(root)"
	}
	if p.Keyword == "" {
		return path + ": " + p.Message
	}
	return path + ": " + p.Message + " (" + p.Keyword + ")"
}

// pointer builds a JSON pointer from reference tokens, escaping "~" and "/".
func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return sb.String()
}

// lessPath orders JSON pointers token by token, numeric tokens by value, so that
// /items/2 sorts before /items/10.
func lessPath(a, b string) bool {
	ta, tb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(ta) && i < len(tb); i++ {
		if ta[i] == tb[i] {
			continue
		}
		na, ea := strconv.Atoi(ta[i])
		nb, eb := strconv.Atoi(tb[i])
		if ea == nil && eb == nil {
			return na < nb
		}
		return ta[i] < tb[i]
	}
	return len(ta) < len(tb)
}

func lessProblem(a, b Problem) bool {
	if a.Path != b.Path {
		return lessPath(a.Path, b.Path)
	}
	if a.Keyword != b.Keyword {
		return a.Keyword < b.Keyword
	}
	return a.Message < b.Message
}
