package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// immutable lists the constructors whose results may sit in a package-level
// var: they are built once and never changed (sentinel errors, compiled
// regular expressions, Lua scripts, metric descriptors, and a value computed
// once on first use by sync.OnceValue — the stage table, read on every hop).
func immutable(pkg, fn string) bool {
	switch pkg + "." + fn {
	case "errors.New", "regexp.MustCompile", "redis.NewScript", "prometheus.NewDesc", "sync.OnceValue":
		return true
	}
	return false
}

// TestNo_package_level_mutable_state parses every non-test Go file under
// internal/, pkg/, services/, streams/ and examples/ and fails on a package-level var that is not a
// blank-identifier interface check, a //go:embed file system, or built by
// one of the immutable constructors, naming it by file:line.
func TestNo_package_level_mutable_state(t *testing.T) {
	root := filepath.Join("..", "..")
	var bad []string
	for _, dir := range []string{"internal", "pkg", "services", "streams", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			for _, v := range mutableVars(t, path, nil) {
				bad = append(bad, fmt.Sprintf("%s:%d: var %s", rel, v.line, v.name))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range bad {
		t.Errorf("package-level mutable state: %s (make it a func, a switch, a field or a const)", b)
	}
}

type global struct {
	name string
	line int
}

// mutableVars returns the package-level vars of one file (src, or read
// from path when src is nil) that are not on the allowlist.
func mutableVars(t *testing.T, path string, src any) []global {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []global
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if embedded(gd, vs) {
				continue // //go:embed needs a package var; the files are read-only
			}
			for i, n := range vs.Names {
				if n.Name == "_" {
					continue
				}
				if i < len(vs.Values) && len(vs.Values) == len(vs.Names) && allowed(vs.Values[i]) {
					continue
				}
				out = append(out, global{n.Name, fset.Position(n.Pos()).Line})
			}
		}
	}
	return out
}

// embedded reports whether vs carries a //go:embed directive.
func embedded(gd *ast.GenDecl, vs *ast.ValueSpec) bool {
	for _, doc := range []*ast.CommentGroup{gd.Doc, vs.Doc} {
		if doc == nil {
			continue
		}
		for _, c := range doc.List {
			if strings.HasPrefix(c.Text, "//go:embed ") {
				return true
			}
		}
	}
	return false
}

func allowed(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && immutable(id.Name, sel.Sel.Name)
}

func TestMutableVars_flags_tables_and_allows_compiled_values(t *testing.T) {
	src := `package p
var ErrX = errors.New("p: x")
var re = regexp.MustCompile("a")
var _ I = (*T)(nil)
//go:embed x.txt
var files embed.FS
var (
	table = map[string]bool{}
	list  = []string{"a"}
	a, b  = f()
	count int
)
func f() (int, int) { var local = 1; return local, 2 }
`
	var got []string
	for _, v := range mutableVars(t, "p.go", src) {
		got = append(got, v.name)
	}
	if want := "table list a b count"; strings.Join(got, " ") != want {
		t.Fatalf("flagged %v, want %s", got, want)
	}
}
