package tracetest

import (
	"fmt"
	"strings"
)

// TreeAttrs are the attributes Tree prints for a span, when set.
func TreeAttrs() []string {
	return []string{"toolgate.call.id", "toolgate.tool", "toolgate.status", "toolgate.failure", "gen_ai.tool.name", "error.type"}
}

// Tree renders the spans of traceID as an indented tree built from their
// parent links, one line per span: name, service, span id and the
// TreeAttrs it has. A span whose parent is not among them (the producer's
// span, or one not exported yet) is a root at the left margin, its parent
// named. Siblings keep the order of spans.
func Tree(spans []Span, traceID string) string {
	var in []Span
	ids := map[string]bool{}
	for _, s := range spans {
		if s.TraceID == traceID && !ids[s.SpanID] {
			in = append(in, s)
			ids[s.SpanID] = true
		}
	}
	children := map[string][]Span{}
	var roots []Span
	for _, s := range in {
		if s.Parent != "" && ids[s.Parent] && s.Parent != s.SpanID {
			children[s.Parent] = append(children[s.Parent], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "trace %s (%d spans)\n", traceID, len(in))
	seen := map[string]bool{}
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		if seen[s.SpanID] { // a parent cycle: print each span once
			return
		}
		seen[s.SpanID] = true
		b.WriteString(strings.Repeat("  ", depth+1))
		b.WriteString(line(s, depth == 0))
		b.WriteByte('\n')
		for _, c := range children[s.SpanID] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	for _, s := range in { // spans only reachable through a cycle
		walk(s, 0)
	}
	return b.String()
}

func line(s Span, root bool) string {
	out := fmt.Sprintf("%s [%s] span=%s", s.Name, s.Service, s.SpanID)
	if root && s.Parent != "" {
		out += " parent=" + s.Parent
	}
	var kv []string
	for _, k := range TreeAttrs() {
		if v, ok := s.Attrs[k]; ok && v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	if len(kv) > 0 {
		out += " " + strings.Join(kv, " ")
	}
	return out
}
