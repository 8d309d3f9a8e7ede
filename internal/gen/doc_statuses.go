package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/pkg/wire"
)

// wireStatus is one Status constant of pkg/wire: its value and comment.
type wireStatus struct {
	status wire.Status
	doc    string
}

// wireStatuses parses pkg/wire/status.go for its Status constants, in
// source order, each with its line or doc comment.
func wireStatuses(root string) ([]wireStatus, error) {
	path := filepath.Join(root, "pkg", "wire", "status.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []wireStatus
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, sp := range gd.Specs {
			vs := sp.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Status" || len(vs.Values) != 1 {
				continue
			}
			v, ok := literal(vs.Values[0])
			if !ok {
				continue
			}
			doc := vs.Comment.Text()
			if doc == "" {
				doc = vs.Doc.Text()
				// "OutputTooLarge: what …" — the name is the table's.
				if _, rest, ok := strings.Cut(doc, vs.Names[0].Name+": "); ok {
					doc = rest
				}
			}
			out = append(out, wireStatus{wire.Status(v), cell(doc)})
		}
	}
	return out, nil
}

// statusesPage is statuses.md: every status with its meaning and kind, the
// transition table, and the failure classes.
func statusesPage(root string) (string, error) {
	all, err := wireStatuses(root)
	if err != nil {
		return "", err
	}
	for _, s := range wire.Statuses() {
		if !slices.ContainsFunc(all, func(w wireStatus) bool { return w.status == s }) {
			return "", fmt.Errorf("wire.Statuses has %q, which is no constant of pkg/wire/status.go", s)
		}
	}
	kind := func(s wire.Status) string {
		switch {
		case s.OK():
			return "terminal, ok"
		case s.Terminal():
			return "terminal, failed"
		}
		return "in flight"
	}
	var b strings.Builder
	b.WriteString("Where a call stands (`wire.Status`): the `status` of a result, the last token of a dead-letter subject (`toolgate.dlq.<stage>.<failure>`), the `outcome` label of the tool-call metrics. Exactly one terminal outcome is published per call; *ok* ones are `executed`, `dry_run` and `no_tool_calls`.\n\n")
	b.WriteString("## Statuses\n\n| Status | Kind | Repairable | Meaning |\n|---|---|---|---|\n")
	for _, w := range all {
		rep := ""
		if w.status.Repairable() {
			rep = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code(string(w.status)), kind(w.status), rep, w.doc)
	}
	b.WriteString("\n## Transitions\n\nThe moves the state machine allows (`wire.Successors`, `wire.Legal`); a status not listed here has none: it is terminal.\n\n| From | May move to |\n|---|---|\n")
	for _, w := range all {
		next := wire.Successors(w.status)
		if len(next) == 0 {
			continue
		}
		var cs []string
		for _, n := range next {
			cs = append(cs, code(string(n)))
		}
		fmt.Fprintf(&b, "| %s | %s |\n", code(string(w.status)), strings.Join(cs, ", "))
	}
	b.WriteString("\n## Failure classes\n\nA call that ends `failed` names its class in the result's `failure` field. The classes the repair gate may try to fix (`Status.Repairable`) end there when repair is exhausted or impossible, and so does a status whose meaning above says a call ends as `failed` with it:\n\n")
	for _, w := range all {
		if w.status.Repairable() {
			fmt.Fprintf(&b, "- %s: %s\n", code(string(w.status)), w.doc)
		}
	}
	b.WriteString("\nEvery other failed outcome is a terminal status of its own (the table above, kind *terminal, failed*). A stage that gives up on an input itself (its redeliveries exhausted, a panic) dead-letters it under a code of its own in place of the status.\n")
	return b.String(), nil
}
