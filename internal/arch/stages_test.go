package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// TestStages_do_not_link_nats_server: a stage binary is a NATS client only;
// the embedded server (internal/natsusers, testenv) is for toolgate up,
// chaos and tests.
func TestStages_do_not_link_nats_server(t *testing.T) {
	g := moduleGraph(t)
	for _, st := range streams.Names() {
		p, ok := g[module+"services/"+st]
		if !ok {
			t.Errorf("services/%s is not a package of the module", st)
			continue
		}
		for _, dep := range p.deps {
			if strings.Contains(dep, "nats-io/nats-server") {
				t.Errorf("services/%s links %s", st, dep)
				break
			}
		}
	}
}

// bindsOf returns the stage.Bind* functions a main.go passes to stage.Main
// (src, or the file at path when src is nil).
func bindsOf(t *testing.T, path string, src any) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var binds []string
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || !isSel(c.Fun, "stage", "Main") || len(c.Args) == 0 {
			return true
		}
		name := fmt.Sprintf("%T", c.Args[0])
		if arg, ok := c.Args[0].(*ast.CallExpr); ok {
			if sel, ok := arg.Fun.(*ast.SelectorExpr); ok && isSel(sel, "stage", sel.Sel.Name) {
				name = sel.Sel.Name
			}
		}
		binds = append(binds, name)
		return true
	})
	return binds
}

func isSel(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && sel.Sel.Name == name
}

// wantBind is the binding a stage's main.go passes (parse: BindParse).
func wantBind(st string) string { return "Bind" + strings.ToUpper(st[:1]) + st[1:] }

// TestStages_bind_only_their_own_gate: each services/<stage>/main.go runs
// stage.Main with its own stage's binding, never a table of them all, so
// the linker keeps only that gate's code (the other gates, go-redis, the
// repair model's client, the JWT verifier are unreachable from it). What
// is reachable cannot be read from `go list` (internal/stage imports every
// gate); the sizes are in the CHANGELOG's issue 35 entry.
func TestStages_bind_only_their_own_gate(t *testing.T) {
	for _, st := range streams.Names() {
		got := bindsOf(t, filepath.Join("..", "..", "services", st, "main.go"), nil)
		if len(got) != 1 || got[0] != wantBind(st) {
			t.Errorf("services/%s/main.go passes %v to stage.Main, want [%s]", st, got, wantBind(st))
		}
	}
	bad := `package main
func main() { stage.Main(stage.BindParse(), nil, nil); stage.Main(all, nil, nil) }`
	if got := bindsOf(t, "main.go", bad); len(got) != 2 || got[0] != "BindParse" || got[1] == wantBind("parse") {
		t.Errorf("bindsOf = %v, want BindParse and the non-binding argument named", got)
	}
}
