// Command gen writes the files derived from the stage table
// (internal/streams.Table): each stage's Kubernetes manifest, each
// services/<stage>/main.go, and the NATS users of deploy/. `make generate`
// runs it with -w; without -w it lists the stale files and fails.
// TestGenerated_files_are_fresh keeps the committed files current.
package main

import (
	"bytes"
	"embed"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"text/template"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/streams"
)

//go:embed templates/*.tmpl
var templates embed.FS

// stageData is what a per-stage template sees.
type stageData struct {
	Name, Stream, PasswordVar string
}

// Files renders every generated file, keyed by its path from the module
// root.
func Files() (map[string][]byte, error) {
	t, err := template.ParseFS(templates, "templates/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	files := map[string][]byte{}
	for _, st := range streams.Table() {
		d := stageData{Name: st.Name, Stream: st.Stream, PasswordVar: authz.PasswordVar(st.Name)}
		for path, tmpl := range map[string]string{
			"deploy/base/stages/" + st.Name + ".yaml": "stage.yaml.tmpl",
			"services/" + st.Name + "/main.go":        "main.go.tmpl",
		} {
			var b bytes.Buffer
			if err := t.ExecuteTemplate(&b, tmpl, d); err != nil {
				return nil, fmt.Errorf("gen: %s: %w", path, err)
			}
			files[path] = b.Bytes()
		}
	}
	accounts, err := authz.Render()
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	files["deploy/base/nats-accounts.conf"] = []byte(accounts)
	return files, nil
}

// Stale lists the generated files under root that differ from Files.
func Stale(root string, files map[string][]byte) []string {
	var stale []string
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil || !bytes.Equal(got, want) {
			stale = append(stale, path)
		}
	}
	slices.Sort(stale)
	return stale
}

func main() {
	write := flag.Bool("w", false, "write the files (else list the stale ones and fail)")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	files, err := Files()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stale := Stale(root, files)
	if !*write {
		for _, p := range stale {
			fmt.Println("stale:", p)
		}
		if len(stale) > 0 {
			os.Exit(1)
		}
		return
	}
	for _, p := range stale {
		path := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(path, files[p], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", p)
	}
}
