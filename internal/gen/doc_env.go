package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/authz"
)

// envDirs are the trees whose Go source the binaries are built from.
func envDirs() []string { return []string{"services", "internal", "pkg", "streams", "examples"} }

// envReader reports whether a function called name reads an environment
// variable, and which of its arguments holds the variable's name: os.Getenv
// and os.LookupEnv, the getenv parameters the code passes around
// (stage.Main(getenv)), and the helpers that default an empty one (env,
// def, envOr, stage.EnvOr, the command line's cmdutil.Env).
func envReader(name string) (arg int, ok bool) {
	switch name {
	case "Getenv", "LookupEnv", "getenv", "env", "Env", "def", "envOr":
		return 0, true
	case "EnvOr":
		return 1, true
	}
	return 0, false
}

// envRead is one place a variable is read.
type envRead struct {
	name, pkg, flag, def string
}

// envReads parses every non-test Go file under envDirs of root and returns
// each read of a TOOLGATE_* variable whose name is a literal (or a constant
// of one) at the call.
func envReads(root string) ([]envRead, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	var pkgs []string
	for _, dir := range envDirs() {
		if _, err := os.Stat(filepath.Join(root, dir)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (d.Name() == "testdata" || d.Name() == "testenv"):
				return filepath.SkipDir
			case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			files, pkgs = append(files, f), append(pkgs, readIn(filepath.ToSlash(rel)))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	consts := map[string]string{} // constant name -> its TOOLGATE_* value
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for i, v := range vs.Values {
					if s, ok := literal(v); ok && strings.HasPrefix(s, "TOOLGATE_") && i < len(vs.Names) {
						consts[vs.Names[i].Name] = s
					}
				}
			}
			return true
		})
	}
	varName := func(e ast.Expr) string {
		if s, ok := literal(e); ok {
			return s
		}
		switch e := e.(type) {
		case *ast.Ident:
			return consts[e.Name]
		case *ast.SelectorExpr:
			return consts[e.Sel.Name]
		}
		return ""
	}
	var reads []envRead
	for i, f := range files {
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			arg, ok := envReader(calleeName(c.Fun))
			if !ok || len(c.Args) <= arg {
				return true
			}
			name := varName(c.Args[arg])
			if !strings.HasPrefix(name, "TOOLGATE_") || strings.HasPrefix(name, "TOOLGATE_TEST_") {
				return true
			}
			r := envRead{name: name, pkg: pkgs[i]}
			if len(c.Args) > arg+1 {
				r.def = types.ExprString(c.Args[arg+1])
			}
			r.flag = flagOf(stack)
			reads = append(reads, r)
			return true
		})
	}
	return reads, nil
}

// readIn is the Read in column's name of the package in dir: the toolgate
// command's packages (internal/cli/...) are the command, services/toolgate,
// as the reader of the page runs them.
func readIn(dir string) string {
	if dir == "internal/cli" || strings.HasPrefix(dir, "internal/cli/") {
		return "services/toolgate"
	}
	return dir
}

// calleeName is the function's own name of a call: env for env(…),
// Getenv for os.Getenv(…).
func calleeName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// flagOf is the flag whose default the innermost call of stack is: the
// read is the second argument of fs.String("name", …) (or Bool, Int, …,
// possibly inside an expression such as def(…) == "true").
func flagOf(stack []ast.Node) string {
	read := stack[len(stack)-1]
	for i := len(stack) - 2; i >= 0; i-- {
		c, ok := stack[i].(*ast.CallExpr)
		if !ok {
			continue
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok || len(c.Args) < 3 {
			return ""
		}
		switch sel.Sel.Name {
		case "String", "Bool", "Int", "Int64", "Uint", "Duration", "Float64":
		default:
			return ""
		}
		name, ok := literal(c.Args[0])
		if !ok || !contains(c.Args[1], read) {
			return ""
		}
		return "--" + name
	}
	return ""
}

func contains(outer ast.Node, inner ast.Node) bool {
	return outer.Pos() <= inner.Pos() && inner.End() <= outer.End()
}

// literal is e's value when e is a string literal.
func literal(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

// envPage is environment.md: each variable, where it is read and the flag
// it is the default of.
func envPage(root string) (string, error) {
	reads, err := envReads(root)
	if err != nil {
		return "", err
	}
	if len(reads) == 0 {
		return "", fmt.Errorf("no TOOLGATE_* variable read under %s", root)
	}
	byName := map[string][]envRead{}
	for _, r := range reads {
		byName[r.name] = append(byName[r.name], r)
	}
	var b strings.Builder
	b.WriteString("Every `TOOLGATE_*` variable the binaries read (tests' own `TOOLGATE_TEST_*` aside). A variable that is the default of a flag is overridden by the flag; an empty variable counts as unset where the default is given. *Read in* names the package: `internal/stage` is every stage binary (`services/<stage>`) and `toolgate up`; `services/toolgate` is the `toolgate` command. Details: the flag's `--help`, or the [command line reference](cli.md).\n\n")
	b.WriteString("| Variable | Read in | Flag | Default when unset |\n|---|---|---|---|\n")
	for _, name := range sortedKeys(byName) {
		rs := byName[name]
		slices.SortFunc(rs, func(a, b envRead) int { return strings.Compare(a.pkg+a.flag+a.def, b.pkg+b.flag+b.def) })
		rs = slices.CompactFunc(rs, func(a, b envRead) bool { return a == b })
		for i, r := range rs {
			v := ""
			if i == 0 {
				v = code(name)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", v, code(r.pkg), code(r.flag), code(r.def))
		}
	}
	b.WriteString("\n## Read by the NATS server\n\nThe server's configuration (`deploy/base/nats-accounts.conf`, `toolgate authz render`) takes each NATS user's password from a variable of its own (`toolgate secrets init` writes them):\n\n")
	for _, u := range authz.Names() {
		fmt.Fprintf(&b, "- %s: user %s\n", code(authz.PasswordVar(u)), code(u))
	}
	return b.String(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
